/**
 * The layers of src/ import downwards only, and the agent verbs, the fleet and the web bridge
 * reach panes through the mux port alone: an import of src/tmux from them would open a second
 * road to a pane, one that follows a restarted server where the port refuses.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const SOURCE = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Top to bottom; layers on one rank (bridge and mcp) may not import each other. */
const RANKS: readonly (readonly string[])[] = [['cli'], ['bridge', 'mcp'], ['hosts'], ['fleet'], ['panes'], ['agents'], ['workspace'], ['mux'], ['tmux'], ['process']];

/** The layers that speak to panes through the mux port only. */
const PORT_ONLY = ['panes', 'fleet', 'bridge'];

interface Import {
  readonly file: string;
  readonly from: string;
  readonly to: string;
}

/** The layer a path under src/ belongs to (its first directory); undefined for a file at the top of src/. */
function layerOf(path: string): string | undefined {
  const parts = relative(SOURCE, path).split(sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every relative import (static, re-export or dynamic) of every TypeScript file under src/, by layer. */
function crossLayerImports(): Import[] {
  const found: Import[] = [];
  for (const entry of readdirSync(SOURCE, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const from = layerOf(file);
    if (from === undefined) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.[^'"]+)['"]/gm)) {
      const to = layerOf(resolve(dirname(file), match[1]!));
      if (to !== undefined && to !== from) found.push({ file: relative(SOURCE, file), from, to });
    }
  }
  return found;
}

function rankOf(layer: string): number {
  const rank = RANKS.findIndex((names) => names.includes(layer));
  assert.notEqual(rank, -1, `src/${layer} is in no layer rank; add it to RANKS`);
  return rank;
}

describe('the layers of src', () => {
  const imports = crossLayerImports();

  it('finds the imports it judges', () => {
    assert.ok(imports.some((one) => one.from === 'panes' && one.to === 'mux'));
    assert.ok(imports.some((one) => one.from === 'cli' && one.to === 'tmux'));
  });

  it('never imports src/tmux from panes, fleet or bridge: they reach panes through the mux port', () => {
    const offending = imports.filter((one) => PORT_ONLY.includes(one.from) && one.to === 'tmux').map((one) => one.file);
    assert.deepEqual(offending, []);
  });

  it('imports only layers below', () => {
    const upward = imports.filter((one) => rankOf(one.to) <= rankOf(one.from)).map((one) => `${one.file} → src/${one.to}`);
    assert.deepEqual(upward, []);
  });
});
