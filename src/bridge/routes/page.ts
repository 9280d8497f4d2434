/**
 * The page's own files: the shell, its script and its stylesheet, the only things answered to a
 * browser that is not paired (the page shows the pairing form).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BridgeError } from '../errors.js';
import type { Route } from '../routing.js';

function pageShell(built: boolean): string {
  const body = built
    ? '<div id="app"><p>Loading drover…</p></div>'
    : '<main><h1>drover web</h1><p>The page was not built. Run <code>npm run build</code> in drover’s checkout and start <code>drover web</code> again.</p></main>';
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="color-scheme" content="dark light">',
    '<title>drover</title>',
    '<link rel="stylesheet" href="/assets/page.css">',
    built ? '<script type="module" src="/assets/page.js"></script>' : '',
    '</head>',
    `<body>${body}</body>`,
    '</html>',
  ].join('\n');
}

function readAsset(directory: string | undefined, name: string): Buffer | undefined {
  if (directory === undefined) return undefined;
  try {
    return readFileSync(join(directory, name));
  } catch {
    return undefined;
  }
}

/** `assets`: the directory holding the bundled page (page.js, page.css). */
export function pageRoutes(assets: string | undefined): Route[] {
  const js = readAsset(assets, 'page.js');
  const css = readAsset(assets, 'page.css');
  const shell = pageShell(js !== undefined);
  const file = (pattern: RegExp, body: string | Buffer | undefined, type: string): Route => ({
    method: 'GET',
    pattern,
    action: 'page',
    open: true,
    handle: async (call) => {
      if (body === undefined) throw new BridgeError('not_found', `drover web has no ${call.request.path}`);
      return { kind: 'file', status: 200, body, type };
    },
  });
  return [
    file(/^\/(index\.html)?$/, shell, 'text/html; charset=utf-8'),
    file(/^\/assets\/page\.js$/, js, 'text/javascript; charset=utf-8'),
    file(/^\/assets\/page\.css$/, css, 'text/css; charset=utf-8'),
  ];
}
