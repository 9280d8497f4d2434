import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse as parseLenientYaml, stringify as toYaml } from 'yaml';
import { WorkspaceError, parseWorkspace, planWorkspace, type WorkspaceFormat } from '../../src/workspace/index.js';
import { BASE, CORPUS_DIR, HOME } from './helpers.js';
import { pick, prng, type Random } from '../support/random.js';

const SEED = 0x6d726f76;
const CASES = 1000;
/** Put into every string value of the marked sources; no error message may contain any of it. */
const MARKER = 'Zq7 private marker/Xk';
const MARKER_FRAGMENTS = ['Zq7', 'private marker', 'marker/Xk'];

type Source = { readonly name: string; readonly format: WorkspaceFormat; readonly text: string };
type Mutation = (text: string, random: Random, sources: readonly Source[]) => string;

const position = (text: string, random: Random): number => Math.floor(random() * (text.length + 1));

function markValues(value: unknown): unknown {
  if (typeof value === 'string') return `${value} ${MARKER}`;
  if (Array.isArray(value)) return value.map(markValues);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, markValues(inner)]));
  }
  return value;
}

function loadSources(): Source[] {
  const sources: Source[] = [];
  for (const sub of ['builder', 'examples']) {
    for (const file of readdirSync(`${CORPUS_DIR}/${sub}`).sort()) {
      const text = readFileSync(`${CORPUS_DIR}/${sub}/${file}`, 'utf8');
      const name = `${sub}/${file}`;
      sources.push({ name, format: file.endsWith('.json') ? 'json' : 'yaml', text });
      const marked = markValues(parseLenientYaml(text));
      sources.push({ name: `${name} (marked, JSON)`, format: 'json', text: JSON.stringify(marked, null, 2) });
      sources.push({ name: `${name} (marked, YAML)`, format: 'yaml', text: toYaml(marked) });
    }
  }
  return sources;
}

function lines(text: string): string[] {
  return text.split('\n');
}

function withLine(text: string, random: Random, edit: (line: string) => string): string {
  const all = lines(text);
  const at = Math.floor(random() * all.length);
  all[at] = edit(all[at] ?? '');
  return all.join('\n');
}

const PALETTE = [':', '-', '[', ']', '{', '}', '&', '*', '!', '#', "'", '"', '\n', ' ', '\t', '|', '>', '%', '$', '~', ',', '?', '\\', '\u0000', '\u00e9', '\ud83d', '0'];
const SCALARS = ['[]', '{}', '123', '-7', '1.5', 'true', 'null', '~', '[a, b]', '{a: 1}', '"x"', '', '.inf', '0x1F'];

const MUTATIONS: Readonly<Record<string, Mutation>> = {
  flip: (text, random) => {
    const at = Math.floor(random() * text.length);
    return text.slice(0, at) + pick(PALETTE, random) + text.slice(at + 1);
  },
  truncate: (text, random) => text.slice(0, position(text, random)),
  duplicateLine: (text, random) => {
    const all = lines(text);
    const at = Math.floor(random() * all.length);
    all.splice(at, 0, all[at] ?? '');
    return all.join('\n');
  },
  yamlFeature: (text, random) =>
    withLine(text, random, (line) => line.replace(/(: |- |\[)/, `$1${pick(['&a ', '*a', '!!str ', '!x ', '? ', '<<: '], random)}`)),
  directive: (text, random) => `${pick(['%YAML 1.2\n---\n', '%TAG !e! tag:x:\n---\n', '---\n', ''], random)}${text}${pick(['\n---\nx: 1\n', '\n...\n', ''], random)}`,
  deepNest: (text, random) => {
    const depth = pick([20, 31, 32, 33, 64, 500, 20_000], random);
    const nest = random() < 0.5 ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `\n${'- '.repeat(depth)}x\n`;
    const at = position(text, random);
    return text.slice(0, at) + nest + text.slice(at);
  },
  oversized: (text, random) => {
    const at = position(text, random);
    return text.slice(0, at) + 'x'.repeat(pick([65_537, 70_000, 1_100_000], random)) + text.slice(at);
  },
  typeSwap: (text, random) => withLine(text, random, (line) => line.replace(/(:\s*).*$/, `$1${pick(SCALARS, random)}`)),
  markerKey: (text, random) => withLine(text, random, (line) => `${line.match(/^\s*/)?.[0] ?? ''}${MARKER}: 1`),
  splice: (text, random, sources) => {
    const donor = lines(pick(sources, random).text);
    const all = lines(text);
    all.splice(Math.floor(random() * all.length), 0, pick(donor, random));
    return all.join('\n');
  },
};

describe('workspace parse fuzzing', () => {
  it(`survives ${CASES} mutated corpus files with path-naming errors that never echo values`, () => {
    const sources = loadSources();
    const random = prng(SEED);
    const names = Object.keys(MUTATIONS);
    const outcomes = { parsed: 0, rejected: new Map<string, number>() };
    for (let n = 0; n < CASES; n++) {
      const source = pick(sources, random);
      const applied: string[] = [];
      let text = source.text;
      const count = 1 + Math.floor(random() * 3);
      for (let m = 0; m < count; m++) {
        const name = pick(names, random);
        applied.push(name);
        text = MUTATIONS[name]?.(text, random, sources) ?? text;
      }
      const label = `case ${n} (${source.name}; ${applied.join(', ')})`;
      try {
        const doc = parseWorkspace(text, { format: source.format, baseDir: BASE, homeDir: HOME });
        assert.ok(planWorkspace(doc).steps.length > 0, label);
        outcomes.parsed += 1;
      } catch (error) {
        assert.ok(error instanceof WorkspaceError, `${label}: threw ${String(error)}`);
        assert.ok(error.path.length > 0, `${label}: no path`);
        assert.equal(error.message, error.path === '$' ? error.reason : `${error.path}: ${error.reason}`, label);
        for (const fragment of MARKER_FRAGMENTS) {
          assert.ok(!error.message.includes(fragment), `${label}: message echoes a value: ${error.message}`);
        }
        outcomes.rejected.set(error.code, (outcomes.rejected.get(error.code) ?? 0) + 1);
      }
    }
    // The mutations must actually reach the interesting rejections, and some inputs must survive.
    for (const code of ['syntax', 'bounds', 'duplicate_key', 'yaml_feature', 'unknown_key', 'type', 'unsupported']) {
      assert.ok((outcomes.rejected.get(code) ?? 0) > 0, `no case was rejected with ${code}`);
    }
    assert.ok(outcomes.parsed > 0);
  });
});
