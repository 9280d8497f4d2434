import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

/** The part of esbuild's metafile this reads: each output file, what it holds and what it imports. */
interface Metafile {
  inputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }>;
  outputs: Record<string, { entryPoint?: string; inputs: Record<string, unknown>; imports: { path: string; kind: string; external?: boolean }[] }>;
}

/** The bundle script keeps esbuild's account of the bin beside the build (dist/cli-bundle.json). */
const metafile = JSON.parse(readFileSync(new URL('../../cli-bundle.json', import.meta.url), 'utf8')) as Metafile;

/** The output whose entry is the compiled module `source` (e.g. `cli/main.js`). */
function outputOf(source: string): string {
  const found = Object.keys(metafile.outputs).filter((output) => metafile.outputs[output]!.entryPoint?.endsWith(`/src/${source}`));
  assert.equal(found.length, 1, `one output for ${source}: ${found.join(', ')}`);
  return found[0]!;
}

/** Every output Node loads when it loads `output`: itself and what it imports statically, transitively. */
function loadedWith(output: string, loaded = new Set<string>()): Set<string> {
  if (loaded.has(output)) return loaded;
  loaded.add(output);
  for (const imported of metafile.outputs[output]!.imports) if (imported.kind === 'import-statement' && !imported.external) loadedWith(imported.path, loaded);
  return loaded;
}

/**
 * The npm packages loading `source` brings in: bundled into its outputs, or imported from
 * node_modules by their static imports. A dynamic import (SQLite for the first file lock, say)
 * loads its package only when the code that needs it runs.
 */
function packagesLoadedBy(source: string): Set<string> {
  const packages = new Set<string>();
  for (const output of loadedWith(outputOf(source))) {
    for (const input of Object.keys(metafile.outputs[output]!.inputs)) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
      if (name !== undefined) packages.add(name);
    }
    for (const imported of metafile.outputs[output]!.imports) if (imported.external && imported.kind === 'import-statement' && !imported.path.startsWith('node:')) packages.add(imported.path);
  }
  return packages;
}

const HEAVY = ['zod', 'yaml', '@modelcontextprotocol/sdk', 'ajv', 'better-sqlite3', 'smol-toml'];

describe('what each command of the bin loads before it runs', () => {
  it('the bin loads nothing before its Node version check', () => {
    // One script: no chunk of its own is loaded with it. Its module imports only dynamically, and
    // esbuild runs a module imported so (the code cache's loader, with its Node modules) only
    // when the import runs, after the check.
    const bin = metafile.outputs[outputOf('cli/drover.js')]!;
    assert.deepEqual(
      bin.imports.filter((imported) => !imported.external),
      [],
    );
    const [source, ...more] = Object.keys(metafile.inputs).filter((input) => input.endsWith('/src/cli/drover.js'));
    assert.deepEqual(more, []);
    assert.deepEqual(
      metafile.inputs[source!]!.imports.filter((imported) => imported.kind !== 'dynamic-import'),
      [],
    );
  });

  it('every command shares a start without any of the heavy packages', () => {
    assert.deepEqual([...packagesLoadedBy('cli/main.js')], ['commander']);
  });

  for (const [module, commands, allowed] of [
    ['pane', 'pane', []],
    ['agent', 'agent', ['smol-toml']],
    ['server', 'up, down, snapshot', []],
    ['mux', 'mux', []],
    // doctor reads the fleet's database and, to see drover's hooks there, codex's TOML configuration.
    ['doctor', 'doctor', ['better-sqlite3', 'smol-toml']],
    ['workspace', 'workspace', ['yaml']],
  ] as const) {
    it(`drover ${commands} loads none of ${HEAVY.filter((name) => !(allowed as readonly string[]).includes(name)).join(', ')}`, () => {
      const loaded = packagesLoadedBy(`cli/commands/${module}.js`);
      assert.deepEqual(
        HEAVY.filter((name) => loaded.has(name) && !(allowed as readonly string[]).includes(name)),
        [],
      );
    });
  }

  it('drover mcp, which needs them, loads zod and the MCP SDK (the check sees bundled packages)', () => {
    const loaded = packagesLoadedBy('cli/commands/mcp.js');
    assert.ok(loaded.has('zod') && loaded.has('@modelcontextprotocol/sdk'), [...loaded].join(', '));
  });
});
