import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { format, inspect } from 'node:util';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  ArgumentError,
  Criteria,
  CriteriaError,
  criteriaJsonSchema,
  Endpoint,
  FieldDecodeError,
  LimitError,
  PANE_FIELDS,
  decodeField,
  escapeFormat,
  explainPaneSearch,
  parseFramedRows,
  protectArgument,
  layoutNeedsVersion,
  resolveLayout,
  rowFormat,
  UnsupportedFeatureError,
  VOLATILE_FIELD_END,
  versionAtLeast,
  type EvaluableRecord,
  type FieldSpec,
} from '../../src/tmux/index.js';

function frame(tag: string, values: (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(tag)];
  for (const value of values) {
    const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value);
    parts.push(Buffer.from(`${bytes.length}:`), bytes);
  }
  parts.push(Buffer.from('\n'));
  return Buffer.concat(parts);
}

/** `count` plain text fields, as a row tag's field list. */
function texts(count: number): FieldSpec[] {
  return Array.from({ length: count }, (_, i) => ({ wire: `text_${i}`, type: 'string' as const, emptyIsNull: false }));
}

describe('framing', () => {
  it('builds length-prefixed formats from catalog fields', () => {
    assert.equal(rowFormat('P', [PANE_FIELDS.paneId, PANE_FIELDS.paneTitle]), 'P#{n:pane_id}:#{pane_id}#{n:pane_title}:#{pane_title}');
  });

  it('names a volatile field once, ended by a per-process marker, so a value read twice cannot tear the row', () => {
    assert.equal(rowFormat('P', [PANE_FIELDS.paneId, PANE_FIELDS.paneCurrentCommand]), `P#{n:pane_id}:#{pane_id}#{pane_current_command}${VOLATILE_FIELD_END}`);
    assert.match(VOLATILE_FIELD_END, /^[A-Za-z0-9]{30,}$/);
    const fields = [PANE_FIELDS.paneId, PANE_FIELDS.paneCurrentCommand, PANE_FIELDS.paneCurrentPath, PANE_FIELDS.paneTitle];
    const command = Buffer.from('a\nb:3:\n');
    const row = Buffer.concat([Buffer.from('P2:%1'), command, Buffer.from(VOLATILE_FIELD_END), Buffer.from(VOLATILE_FIELD_END), Buffer.from('1:t\n')]);
    const [parsed] = parseFramedRows(row, { P: fields });
    assert.deepEqual(parsed!.values.map((value) => value.toString()), ['%1', command.toString(), '', 't']);
    assert.throws(() => parseFramedRows(Buffer.from('P2:%1sleep\n'), { P: fields.slice(0, 2) }), /pane_current_command has no end marker/);
    assert.throws(() => parseFramedRows(Buffer.concat([Buffer.from('P2:%1'), Buffer.from('x'.repeat(11)), Buffer.from(VOLATILE_FIELD_END), Buffer.from('\n')]), { P: fields.slice(0, 2) }, { maxRows: 10, maxBytes: 1024, maxFieldBytes: 10 }), LimitError);
  });

  it('keeps values containing newlines, separators, colons and invalid UTF-8 intact', () => {
    const tricky = Buffer.concat([Buffer.from('a\tb\nc:3:x\n'), Buffer.from([0xff, 0xfe])]);
    const rows = parseFramedRows(Buffer.concat([frame('S', ['$1', tricky]), frame('S', ['$2', ''])]), { S: texts(2) });
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[0]!.values[1], tricky);
    assert.equal(rows[1]!.values[1]!.length, 0);
  });

  it('gives the fields of a row by position, as views of the listing taken when read', () => {
    const output = Buffer.concat([frame('S', ['$1', 'work']), frame('S', ['$2', ''])]);
    const [first, second] = parseFramedRows(output, { S: texts(2) });
    assert.equal(first!.width, 2);
    assert.equal(first!.field(1).toString(), 'work');
    assert.equal(first!.field(1).buffer, output.buffer, 'a view, not a copy');
    assert.equal(second!.field(1).length, 0);
    assert.throws(() => first!.field(2), /row S has no field 2 \(it has 2\)/);
    assert.throws(() => first!.field(-1), RangeError);
  });

  it('fails explicitly on malformed framing', () => {
    assert.throws(() => parseFramedRows(Buffer.from('S2:$1'), { S: texts(1) }), FieldDecodeError);
    assert.throws(() => parseFramedRows(Buffer.from('S3:$1\n'), { S: texts(1) }), FieldDecodeError);
    assert.throws(() => parseFramedRows(Buffer.from('X2:$1\n'), { S: texts(1) }), FieldDecodeError);
    assert.throws(() => parseFramedRows(Buffer.from('S:$1\n'), { S: texts(1) }), FieldDecodeError);
    assert.throws(() => parseFramedRows(Buffer.from('S1:ab\n'), { S: texts(1) }), FieldDecodeError);
  });

  it('enforces row, byte and field bounds', () => {
    const two = Buffer.concat([frame('S', ['a']), frame('S', ['b'])]);
    assert.throws(() => parseFramedRows(two, { S: texts(1) }, { maxRows: 1, maxBytes: 1024, maxFieldBytes: 10 }), LimitError);
    assert.throws(() => parseFramedRows(two, { S: texts(1) }, { maxRows: 10, maxBytes: 4, maxFieldBytes: 10 }), LimitError);
    assert.throws(() => parseFramedRows(frame('S', ['x'.repeat(11)]), { S: texts(1) }, { maxRows: 10, maxBytes: 1024, maxFieldBytes: 10 }), LimitError);
  });

  it('decodes by catalog type with declared null sentinels only', () => {
    assert.equal(decodeField(PANE_FIELDS.paneId, Buffer.from('%3')), '%3');
    assert.equal(decodeField(PANE_FIELDS.paneActive, Buffer.from('1')), true);
    assert.equal(decodeField(PANE_FIELDS.paneWidth, Buffer.from('80')), 80);
    assert.equal(decodeField(PANE_FIELDS.panePid, Buffer.alloc(0)), null);
    assert.equal(decodeField(PANE_FIELDS.paneTitle, Buffer.alloc(0)), '');
    assert.throws(() => decodeField(PANE_FIELDS.paneWidth, Buffer.alloc(0)), FieldDecodeError);
    assert.throws(() => decodeField(PANE_FIELDS.paneWidth, Buffer.from('8x')), FieldDecodeError);
    assert.throws(() => decodeField(PANE_FIELDS.paneTitle, Buffer.from([0xff])), FieldDecodeError);
    assert.throws(() => decodeField(PANE_FIELDS.paneId, Buffer.from('3')), FieldDecodeError);
  });
});

describe('escaping', () => {
  it('doubles # for format-expanded values', () => {
    assert.equal(escapeFormat('a#{b}#'), 'a##{b}##');
  });

  it('protects a trailing semicolon from tmux command splitting', () => {
    assert.equal(protectArgument('ls;'), 'ls\\;');
    assert.equal(protectArgument('a;b'), 'a;b');
    assert.equal(protectArgument(';'), '\\;');
  });
});

describe('layouts and versions', () => {
  it('resolves names, prefixes and saved layouts before tmux is asked', () => {
    assert.equal(resolveLayout('tiled'), 'tiled');
    assert.equal(resolveLayout('main-v'), 'main-vertical');
    assert.equal(resolveLayout('ti'), 'tiled');
    assert.throws(() => resolveLayout('main'), /ambiguous/);
    assert.throws(() => resolveLayout('spiral'), /unknown layout/);
    assert.throws(() => resolveLayout('main-vertical-mirrored', '3.3a'), (error: unknown) => error instanceof UnsupportedFeatureError && /3\.5/.test(error.message));
    // A prefix that only a mirrored layout has is unsupported too, not unknown.
    assert.throws(() => resolveLayout('main-vertical-', '3.3a'), UnsupportedFeatureError);
    assert.throws(() => resolveLayout('main-vertical-mirrored'), UnsupportedFeatureError);
    assert.equal(resolveLayout('main-vertical-mirrored', '3.5a'), 'main-vertical-mirrored');
    // tmux 3.5 knows both main-vertical and its mirror, so the prefix is ambiguous there.
    assert.throws(() => resolveLayout('main-v', '3.5a'), /ambiguous/);
    assert.equal(layoutNeedsVersion('main-v'), true);
    assert.equal(layoutNeedsVersion('main-vertical'), false);
    assert.equal(layoutNeedsVersion('ti'), false);
    assert.equal(layoutNeedsVersion('b25d,80x24,0,0,2'), false);
    assert.equal(resolveLayout('b25d,80x24,0,0,2'), 'b25d,80x24,0,0,2');
    assert.throws(() => resolveLayout('b25d,nonsense'), ArgumentError);
  });

  it('compares tmux versions', () => {
    assert.ok(versionAtLeast('3.3a', '3.3'));
    assert.ok(versionAtLeast('3.5', '3.3a'));
    assert.ok(!versionAtLeast('3.2a', '3.3'));
    assert.ok(versionAtLeast('next-3.6', '3.5'));
  });
});

describe('Endpoint', () => {
  it('needs exactly one of socket name and socket path', () => {
    assert.throws(() => new Endpoint({} as never), ArgumentError);
    assert.throws(() => new Endpoint({ socketName: 'a', socketPath: '/tmp/x' } as never), ArgumentError);
  });

  it('resolves socket names under tmux’s per-user directory', () => {
    const endpoint = Endpoint.fromSocketName('work', { env: { PATH: process.env.PATH, TMUX_TMPDIR: '/var/tmp' } });
    assert.equal(endpoint.socketPath, `/var/tmp/tmux-${process.getuid!()}/work`);
    assert.deepEqual(endpoint.args, ['-S', endpoint.socketPath]);
  });

  it('rejects invalid names, paths and a missing tmux', () => {
    assert.throws(() => Endpoint.fromSocketName('a/b'), /socket path/);
    assert.throws(() => Endpoint.fromSocketName(''), ArgumentError);
    const long = `/tmp/${'x'.repeat(200)}`;
    assert.throws(() => Endpoint.fromSocketPath(long), { message: `socket path ${long} is 205 bytes; unix sockets allow at most 107` });
    assert.throws(() => Endpoint.fromSocketPath('/tmp/a', { executable: 'drover-no-such-tmux' }), /not found on PATH/);
  });

  it('reads $TMUX only in fromEnv, and falls back to the default socket', () => {
    const withTmux = Endpoint.fromEnv({ env: { PATH: process.env.PATH, TMUX: '/tmp/some/sock,123,0' } });
    assert.equal(withTmux.socketPath, '/tmp/some/sock');
    const without = Endpoint.fromEnv({ env: { PATH: process.env.PATH, TMUX_TMPDIR: '/tmp' } });
    assert.equal(without.socketName, 'default');
  });
});

class FakeRecord implements EvaluableRecord {
  constructor(
    private readonly values: Record<string, string | number | boolean | null>,
    private readonly relations: Record<string, FakeRecord[]> = {},
  ) {}
  value(wire: string): string | number | boolean | null {
    return this.values[wire] ?? null;
  }
  related(relation: string): readonly FakeRecord[] {
    return this.relations[relation] ?? [];
  }
}

describe('Criteria', () => {
  const window = new FakeRecord({ window_name: 'agents', window_panes: 3 });
  const pane = new FakeRecord({ pane_id: '%4', pane_current_command: 'claude', pane_width: 120, pane_active: true, pane_title: 'Build' }, { window: [window] });

  it('evaluates fields, text operators and relations', () => {
    assert.ok(Criteria.build('pane', { field: 'pane_current_command', op: 'eq', value: 'claude' }).test(pane));
    assert.ok(Criteria.build('pane', { field: 'pane_width', op: 'gt', value: 100 }).test(pane));
    assert.ok(!Criteria.build('pane', { field: 'pane_width', op: 'lt', value: 100 }).test(pane));
    assert.ok(Criteria.build('pane', { field: 'pane_title', op: 'startsWith', value: 'build', caseInsensitive: true }).test(pane));
    assert.ok(Criteria.build('pane', { field: 'pane_current_command', op: 'regex', value: '^cl.*e$' }).test(pane));
    assert.ok(Criteria.build('pane', { some: { relation: 'window', where: { field: 'window_name', op: 'eq', value: 'agents' } } }).test(pane));
    assert.ok(Criteria.build('pane', { none: { relation: 'sessions', where: { field: 'session_name', op: 'eq', value: 'x' } } }).test(pane));
    assert.ok(Criteria.build('pane', { every: { relation: 'sessions', where: { field: 'session_name', op: 'eq', value: 'x' } } }).test(pane));
    assert.ok(Criteria.build('pane', { and: [{ field: 'pane_active', op: 'eq', value: true }, { not: { field: 'pane_dead_status', op: 'notNull' } }] }).test(pane));
    assert.ok(Criteria.build('pane', { or: [{ field: 'pane_id', op: 'eq', value: '%9' }, { field: 'pane_id', op: 'eq', value: '%4' }] }).test(pane));
  });

  it('round-trips the versioned wire form', () => {
    const criteria = Criteria.fromJSON('{"version":1,"entity":"pane","where":{"field":"pane_id","op":"eq","value":"%4"}}');
    assert.deepEqual(Criteria.fromJSON(JSON.stringify(criteria.toWire())).toWire(), criteria.toWire());
    assert.deepEqual(criteria.toWire(), { version: 1, entity: 'pane', where: { field: 'pane_id', op: 'eq', value: '%4' } });
    assert.ok(criteria.test(pane));
    assert.ok(Criteria.parse('{"field":"pane_id","op":"eq","value":"%4"}').test(pane));
    assert.equal(Criteria.parse('{"version":1,"entity":"window","where":{"field":"window_panes","op":"eq","value":3}}').entity, 'window');
  });

  it('never shows a literal value when inspected, logged or serialized, and refusals name the path instead', () => {
    const secret = 'tok_SECRET_4242';
    const criteria = Criteria.build('pane', {
      or: [
        { field: 'pane_title', op: 'eq', value: secret },
        { field: 'pane_current_command', op: 'regex', value: `^${secret}$` },
        { some: { relation: 'window', where: { field: 'window_name', op: 'contains', value: secret, caseInsensitive: true } } },
      ],
    });
    const shown = (value: unknown): string[] => [
      inspect(value, { depth: Infinity, showHidden: true }),
      format('%s %o %O %j', value, value, value, value),
      JSON.stringify(value) ?? '',
      String(value),
    ];
    for (const text of shown(criteria)) {
      assert.ok(!text.includes(secret), text);
      assert.match(text, /pane_title/);
    }
    for (const text of [...shown(criteria.and(criteria)), ...shown(criteria.not()), ...shown({ nested: criteria }), ...shown(explainPaneSearch(criteria))]) assert.ok(!text.includes(secret), text);
    // Exporting the wire form is explicit, and keeps every value.
    assert.equal(JSON.stringify(criteria.toWire()).split(secret).length - 1, 3);
    assert.equal(JSON.stringify(explainPaneSearch(criteria).residual.toWire()).split(secret).length - 1, 3);

    const refusals: [() => unknown, string][] = [
      [() => Criteria.build('pane', { field: 'pane_width', op: 'eq', value: secret }), 'where.value'],
      [() => Criteria.build('pane', { field: 'pane_title', op: 'regex', value: `(${secret}` }), 'where.value'],
      [() => Criteria.build('pane', { field: 'pane_title', op: 'regex', value: `${secret}(?=x)` }), 'where.value'],
      [() => Criteria.build('pane', { and: [{ field: 'pane_title', op: 'eq', value: secret.repeat(300) }] }), 'where.and[0].value'],
      [() => Criteria.fromJSON(`{"version":1,"entity":"pane","where":{"field":"pane_title","op":"eq","value":${secret}}}`), '$'],
      [() => Criteria.fromJSON(secret), '$'],
      [() => Criteria.parse(`{"field":"pane_title","op":"eq","value":${secret}}`), '$'],
    ];
    for (const [refuse, path] of refusals) {
      assert.throws(refuse, (error: unknown) => {
        assert.ok(error instanceof CriteriaError, String(error));
        assert.equal(error.path, path);
        for (const text of [error.message, error.stack ?? '', ...shown(error)]) assert.ok(!text.includes(secret), text);
        return true;
      });
    }
  });

  it('validates the whole tree, inactive branches included, naming the path', () => {
    const cases: [unknown, RegExp][] = [
      [{ or: [{ field: 'pane_id', op: 'eq', value: '%4' }, { field: 'nope', op: 'eq', value: 1 }] }, /where\.or\[1\]\.field/],
      [{ field: 'pane_width', op: 'eq', value: '80' }, /where\.value/],
      [{ field: 'pane_width', op: 'contains', value: '8' }, /where\.op/],
      [{ field: 'pane_id', op: 'like', value: 'x' }, /unknown operator/],
      [{ field: 'pane_id', op: 'eq', value: 'x', extra: 1 }, /where\.extra/],
      [{ some: { relation: 'clients', where: { field: 'pane_id', op: 'eq', value: 'x' } } }, /no relation/],
      [{ field: 'pane_id', op: 'regex', value: '(' }, /regular expression/],
      [{ and: [] }, /non-empty/],
      [{ some: { relation: 'window', where: { field: 'pane_id', op: 'eq', value: '%1' } } }, /window has no field/],
    ];
    for (const [where, pattern] of cases) assert.throws(() => Criteria.build('pane', where), (error: unknown) => error instanceof CriteriaError && pattern.test(error.message));
    assert.throws(() => Criteria.fromJSON({ version: 2, entity: 'pane', where: {} }), /version/);
    assert.throws(() => Criteria.fromJSON({ version: 1, entity: 'pane', where: {}, more: 1 }), /\$\.more/);
    assert.throws(() => Criteria.fromJSON('{'), /not valid JSON/);
    let deep: unknown = { field: 'pane_id', op: 'eq', value: '%1' };
    for (let i = 0; i < 40; i += 1) deep = { not: deep };
    assert.throws(() => Criteria.build('pane', deep), /deeper than/);
  });

  it('publishes a JSON Schema of the wire form that agrees with the validator on shape', () => {
    const validate = new AjvJsonSchemaValidator().getValidator<unknown>(criteriaJsonSchema());
    const wire = (entity: string, where: unknown): unknown => ({ version: 1, entity, where });
    const valid = [
      wire('pane', { and: [{ field: 'pane_current_command', op: 'regex', value: '^cl' }, { not: { field: 'pane_dead_status', op: 'notNull' } }] }),
      wire('pane', { some: { relation: 'sessions', where: { field: 'session_name', op: 'startsWith', value: 'w', caseInsensitive: true } } }),
      wire('window', { every: { relation: 'panes', where: { field: 'pane_width', op: 'ge', value: 80 } } }),
      wire('session', { or: [{ field: 'session_attached', op: 'gt', value: 0 }, { field: 'session_name', op: 'eq', value: 'x' }] }),
    ];
    for (const sample of valid) {
      assert.doesNotThrow(() => Criteria.fromJSON(sample as object));
      assert.equal(validate(sample).valid, true, JSON.stringify(sample));
    }
    const invalid = [
      wire('pane', { field: 'nope', op: 'eq', value: 1 }),
      wire('pane', { field: 'pane_id', op: 'like', value: 'x' }),
      wire('pane', { field: 'pane_id', op: 'eq', value: 'x', extra: 1 }),
      wire('pane', { field: 'pane_id', op: 'isNull', value: 'x' }),
      wire('pane', { and: [] }),
      wire('pane', { some: { relation: 'clients', where: { field: 'pane_id', op: 'eq', value: 'x' } } }),
      wire('window', { field: 'pane_id', op: 'eq', value: '%1' }),
      wire('nothing', { field: 'pane_id', op: 'eq', value: '%1' }),
      { version: 2, entity: 'pane', where: { field: 'pane_id', op: 'eq', value: '%1' } },
      { version: 1, entity: 'pane', where: { field: 'pane_id', op: 'eq', value: '%1' }, more: 1 },
    ];
    for (const sample of invalid) {
      assert.throws(() => Criteria.fromJSON(sample as object), CriteriaError);
      assert.equal(validate(sample).valid, false, JSON.stringify(sample));
    }
  });

  it('is immutable and composes', () => {
    const a = Criteria.build('pane', { field: 'pane_id', op: 'eq', value: '%4' });
    const b = Criteria.build('pane', { field: 'pane_width', op: 'ge', value: 120 });
    assert.ok(a.and(b).test(pane));
    assert.ok(!a.and(b).not().test(pane));
    assert.ok(Object.isFrozen(a.where));
    assert.throws(() => a.and(Criteria.build('window', { field: 'window_name', op: 'eq', value: 'x' })), ArgumentError);
  });
});
