import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ArgumentError,
  Criteria,
  CriteriaError,
  setHookArgs,
  setOptionArgs,
  showEnvironmentArgs,
  showHooksArgs,
  showOptionArgs,
  unsetEnvironmentArgs,
  unsetHookArgs,
  unsetOptionArgs,
  type EvaluableRecord,
} from '../../src/tmux/index.js';
import { pick, prng } from '../support/random.js';

const SEED = 0x63726974;
const CASES = 600;


/** A pane whose text fields are whatever a program in it chose to print. */
function hostilePane(text: string): EvaluableRecord {
  const values: Record<string, string | number | boolean | null> = { pane_title: text, pane_current_command: text, pane_id: '%1', pane_width: 80, pane_active: true };
  return { value: (wire) => values[wire] ?? null, related: () => [] };
}

/** Patterns that take a backtracking engine exponential or polynomial time on the texts below. */
const RUNAWAY_PATTERNS = ['^(a+)+$', '(a|a)*b', '(a|aa)+$', '^(a*)*$', '(x+x+)+y', '^(\\w+\\s?)*$', '(.*a){12}', '^(([a-z])+.)+[A-Z]([a-z])+$'];
const TEXTS = ['a'.repeat(28), `${'a'.repeat(40)}!`, 'x'.repeat(5000), `${'aaaa '.repeat(2000)}!`, 'é'.repeat(3000)];
const LEAVES = [
  { field: 'pane_id', op: 'eq', value: '%1' },
  { field: 'pane_width', op: 'gt', value: 10 },
  { field: 'pane_title', op: 'contains', value: 'a', caseInsensitive: true },
  { field: 'pane_dead_status', op: 'isNull' },
];

/** A random expression: nested and/or/not, leaves, regex leaves from the runaway list, sometimes broken. */
function randomExpression(random: () => number, depth: number): unknown {
  if (depth <= 0 || random() < 0.25) {
    if (random() < 0.4) return { field: pick(['pane_title', 'pane_current_command'], random), op: 'regex', value: pick(RUNAWAY_PATTERNS, random), caseInsensitive: random() < 0.3 };
    return structuredClone(pick(LEAVES, random));
  }
  const shape = random();
  if (shape < 0.35) return { and: Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomExpression(random, depth - 1)) };
  if (shape < 0.7) return { or: Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomExpression(random, depth - 1)) };
  if (shape < 0.9) return { not: randomExpression(random, depth - 1) };
  return pick([{ not: null }, { and: {} }, { field: 'pane_title', op: 'regex', value: '(?=a)' }, { field: 'nope', op: 'eq', value: 1 }, 7, 'x'], random);
}

/** A chain of `not` (or single-element `and`) that many levels deep, as wire JSON. */
function nested(levels: number, key: 'not' | 'and'): string {
  let text = '{"field":"pane_id","op":"eq","value":"%1"}';
  for (let i = 0; i < levels; i += 1) text = key === 'not' ? `{"not":${text}}` : `{"and":[${text}]}`;
  return `{"version":1,"entity":"pane","where":${text}}`;
}

/** The same chain as an object, built without JSON (whose parser has its own depth limit). */
function nestedObject(levels: number, key: 'not' | 'and'): unknown {
  let where: unknown = { field: 'pane_id', op: 'eq', value: '%1' };
  for (let i = 0; i < levels; i += 1) where = key === 'not' ? { not: where } : { and: [where] };
  return where;
}

describe('criteria under hostile input', () => {
  it('rejects nesting far past the limit with the depth error, not a stack overflow', () => {
    const deepError = (error: unknown): boolean => error instanceof CriteriaError && /nested deeper than 32/.test(error.message);
    for (const key of ['not', 'and'] as const) {
      for (const levels of [33, 3000]) assert.throws(() => Criteria.fromJSON(nested(levels, key)), deepError, `${levels} × ${key}`);
      for (const levels of [33, 3000, 100_000]) assert.throws(() => Criteria.build('pane', nestedObject(levels, key)), deepError, `build, ${levels} × ${key}`);
    }
    assert.ok(Criteria.fromJSON(nested(31, 'not')), 'the limit itself is fine');
  });

  it('matches regular expressions in linear time: a pane title cannot hang evaluation', () => {
    const criteria = Criteria.build('pane', { field: 'pane_title', op: 'regex', value: '^(a+)+$' });
    assert.equal(criteria.test(hostilePane('a'.repeat(28))), true);
    assert.equal(criteria.test(hostilePane(`${'a'.repeat(5000)}!`)), false);
    assert.equal(Criteria.build('pane', { field: 'pane_title', op: 'regex', value: 'BUILD', caseInsensitive: true }).test(hostilePane('the build ran')), true);
    assert.equal(Criteria.build('pane', { field: 'pane_title', op: 'regex', value: '^\\p{L}+$' }).test(hostilePane('éàü')), true);
    // Backreferences and lookaround are what make a pattern run away; they are refused, naming the place.
    for (const pattern of ['(a)\\1', '(?=a)a', '(?!a)b']) {
      assert.throws(
        () => Criteria.build('pane', { field: 'pane_title', op: 'regex', value: pattern }),
        (error: unknown) => error instanceof CriteriaError && error.path === 'where.value' && /not a valid regular expression/.test(error.message),
        pattern,
      );
    }
  });

  it(`survives ${CASES} seeded random criteria: built or refused with CriteriaError, and evaluated to a boolean`, () => {
    const random = prng(SEED);
    const outcomes = { built: 0, refused: 0, deep: 0 };
    for (let n = 0; n < CASES; n += 1) {
      let where = randomExpression(random, 1 + Math.floor(random() * 6));
      // Some cases wrap the expression far past the depth limit; those are built from the
      // object itself, since JSON's own parser and serializer have a depth limit of their own.
      const deep = random() < 0.15;
      if (deep) {
        const levels = pick([32, 33, 500, 3000, 20_000], random);
        for (let i = 0; i < levels; i += 1) where = random() < 0.5 ? { not: where } : { or: [where] };
        outcomes.deep += 1;
      }
      let criteria: Criteria;
      try {
        criteria = deep ? Criteria.build('pane', where) : Criteria.fromJSON(JSON.stringify({ version: 1, entity: 'pane', where }));
      } catch (error) {
        assert.ok(error instanceof CriteriaError, `case ${n}: threw ${String(error)}`);
        outcomes.refused += 1;
        continue;
      }
      outcomes.built += 1;
      for (const text of TEXTS) assert.equal(typeof criteria.test(hostilePane(text)), 'boolean', `case ${n}`);
    }
    assert.ok(outcomes.built > 0 && outcomes.refused > 0 && outcomes.deep > 0, JSON.stringify(outcomes));
  });
});

describe('names tmux could read as flags', () => {
  const NAMES = ['-g', '-s', '--', '-gw', '-@x', 'status', '@drover', 'status-format[0]'];

  it('put every user-supplied option, hook and environment name after --, or refuse it', () => {
    const random = prng(SEED ^ 0x5a5a);
    const builders: [string, (name: string) => readonly string[]][] = [
      ['show-options', (name) => showOptionArgs({ kind: 'global', of: 'session' }, name, true)],
      ['set-option', (name) => setOptionArgs({ kind: 'server' }, name, 'x')],
      ['set-option -u', (name) => unsetOptionArgs({ kind: 'global', of: 'window' }, name)],
      ['show-hooks', (name) => showHooksArgs({ kind: 'global' }, name)],
      ['set-hook', (name) => setHookArgs({ kind: 'global' }, name, 'display-message x')],
      ['set-hook -u', (name) => unsetHookArgs({ kind: 'global' }, name)],
      ['show-environment', (name) => showEnvironmentArgs({ kind: 'global' }, name)],
      ['set-environment -u', (name) => unsetEnvironmentArgs({ kind: 'global' }, name)],
    ];
    for (let n = 0; n < 200; n += 1) {
      const name = random() < 0.5 ? pick(NAMES, random) : `${pick(['-', '', '@', '--'], random)}${pick(['g', 'status', 'x-y', 'a_b'], random)}`;
      for (const [what, build] of builders) {
        let argv: readonly string[];
        try {
          argv = build(name);
        } catch (error) {
          assert.ok(error instanceof ArgumentError, `${what} ${name}: threw ${String(error)}`);
          continue;
        }
        const at = argv.lastIndexOf(name);
        assert.ok(at > 0, `${what}: ${name} is in ${JSON.stringify(argv)}`);
        assert.equal(argv[at - 1], '--', `${what}: ${JSON.stringify(argv)} puts ${name} where tmux reads flags`);
      }
    }
  });
});
