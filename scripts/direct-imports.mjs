// An esbuild plugin for the CLI bundle: in drover's own compiled modules, an import through a
// layer's index.js (`import { Server } from '../tmux/index.js'`) becomes an import from the
// module that defines each name (`… from '../tmux/server.js'`).
// Why: esbuild gives a command's chunk every module any import record reaches, used or not. One
// name taken through an index would make `drover pane map` load every module the index names,
// and what those import: zod, yaml, the workspace layer. Imported straight from where they are
// defined, the same modules (one instance each) are reached, and only those.
// A name this cannot place (not found, or offered by two `export *`) keeps its index import.
import { readFileSync } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';

const DECLARED = /^export (?:async )?(?:function\*?|class|const|let|var) ([\w$]+)/gm;
const LISTED = /^export \{([^}]*)\};/gm;
const RE_EXPORTED = /^export (?:(\*)|\* as ([\w$]+)|\{([^}]*)\}) from '(\.{1,2}\/[^']+)';/gm;
const IMPORTED = /^(import|export) \{([^}]*)\} from '(\.{1,2}\/[^']+)';/gm;

/** `a, b as c` → [['a', 'a'], ['b', 'c']]: each name as the module has it, and as it is bound here. */
function specifiers(list) {
  return list
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const [name, alias] = item.split(/\s+as\s+/);
      return [name, alias ?? name];
    });
}

/** Where each name a compiled module exports comes from: `{ file, name }`, or `{ file, namespace: true }`. */
function exportsOf(file, cache) {
  const known = cache.get(file);
  if (known !== undefined) return known;
  const exported = new Map();
  cache.set(file, exported);
  const text = readFileSync(file, 'utf8');
  for (const [, name] of text.matchAll(DECLARED)) exported.set(name, { file, name });
  for (const [, list] of text.matchAll(LISTED)) for (const [, name] of specifiers(list)) exported.set(name, { file, name });
  const starred = new Map();
  const ambiguous = new Set();
  for (const [, star, namespace, list, from] of text.matchAll(RE_EXPORTED)) {
    const target = resolve(dirname(file), from);
    if (namespace !== undefined) exported.set(namespace, { file: target, namespace: true });
    else if (list !== undefined) {
      for (const [name, alias] of specifiers(list)) exported.set(alias, exportsOf(target, cache).get(name) ?? { file: target, name });
    } else if (star !== undefined) {
      for (const [name, origin] of exportsOf(target, cache)) {
        const other = starred.get(name);
        if (other !== undefined && (other.file !== origin.file || other.name !== origin.name)) ambiguous.add(name);
        starred.set(name, origin);
      }
    }
  }
  for (const [name, origin] of starred) if (!exported.has(name) && !ambiguous.has(name) && name !== 'default') exported.set(name, origin);
  return exported;
}

function specifier(from, to) {
  const path = relative(dirname(from), to);
  return path.startsWith('.') ? path : `./${path}`;
}

/** The statement's names regrouped by the module each comes from. */
function direct(file, keyword, list, index, cache) {
  const origins = exportsOf(index, cache);
  const groups = new Map();
  const statements = [];
  for (const [name, alias] of specifiers(list)) {
    const origin = origins.get(name);
    if (origin?.namespace && keyword === 'import') {
      statements.push(`import * as ${alias} from '${specifier(file, origin.file)}';`);
      continue;
    }
    const from = origin === undefined || origin.namespace ? index : origin.file;
    const names = groups.get(from) ?? [];
    names.push(origin === undefined || origin.namespace ? [name, alias] : [origin.name, alias]);
    groups.set(from, names);
  }
  for (const [from, names] of groups) {
    statements.push(`${keyword} { ${names.map(([name, alias]) => (name === alias ? name : `${name} as ${alias}`)).join(', ')} } from '${specifier(file, from)}';`);
  }
  return statements.join('\n');
}

/** The plugin, for the compiled modules under `ownCode` (tsc's output). */
export function directImports(ownCode) {
  const cache = new Map();
  return {
    name: 'direct-imports',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, ({ path }) => {
        if (!path.startsWith(`${ownCode}/`)) return undefined;
        const text = readFileSync(path, 'utf8').replace(IMPORTED, (statement, keyword, list, from) => {
          const target = resolve(dirname(path), from);
          return basename(target) === 'index.js' && target.startsWith(`${ownCode}/`) ? direct(path, keyword, list, target, cache) : statement;
        });
        return { contents: text, loader: 'js', resolveDir: dirname(path) };
      });
    },
  };
}
