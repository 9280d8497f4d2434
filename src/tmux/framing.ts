import { FieldDecodeError, LimitError } from './errors.js';
import type { FieldSpec, FieldTable, FieldType } from './catalog.js';
import { decodeUtf8 } from '../process/errors.js';

/**
 * Rows are framed with tmux's own length operator: every field is written as
 * `#{n:var}:#{var}`, its byte length, a colon, then exactly that many bytes. No value (tabs,
 * newlines, the separator itself, invalid UTF-8) can break a row apart, and a mismatch is
 * detected instead of silently misread.
 */

export interface FramingLimits {
  maxBytes: number;
  maxRows: number;
  maxFieldBytes: number;
}

export const DEFAULT_FRAMING_LIMITS: Readonly<FramingLimits> = Object.freeze({
  maxBytes: 1024 * 1024,
  maxRows: 10_000,
  maxFieldBytes: 64 * 1024,
});

/** A tmux format printing one framed row: a one-letter tag, then each field length-prefixed. */
export function rowFormat(tag: string, fields: readonly FieldSpec[]): string {
  return tag + fields.map((f) => `#{n:${f.wire}}:#{${f.wire}}`).join('');
}

export interface RawRow {
  readonly tag: string;
  readonly values: readonly Buffer[];
}

const COLON = 0x3a;
const NEWLINE = 0x0a;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * Splits framed output into rows. `fieldCounts` gives, per tag, how many fields its rows
 * carry. Anything unexpected — an unknown tag, a bad length, a missing row end — fails.
 */
export function parseFramedRows(output: Buffer, fieldCounts: Readonly<Record<string, number>>, limits: FramingLimits = DEFAULT_FRAMING_LIMITS): RawRow[] {
  if (output.length > limits.maxBytes) {
    throw new LimitError(`tmux listing is ${output.length} bytes, over the ${limits.maxBytes}-byte snapshot limit`, 'snapshot_bytes', limits.maxBytes, {
      phase: 'decode',
      delivery: 'observed',
    });
  }
  const rows: RawRow[] = [];
  let at = 0;
  while (at < output.length) {
    if (rows.length >= limits.maxRows) {
      throw new LimitError(`tmux listing has more than ${limits.maxRows} rows`, 'snapshot_rows', limits.maxRows, { phase: 'decode', delivery: 'observed' });
    }
    const tag = String.fromCharCode(output[at]!);
    const count = fieldCounts[tag];
    if (count === undefined) throw new FieldDecodeError(`malformed framing: unexpected row tag at byte ${at}`);
    at += 1;
    const values: Buffer[] = [];
    for (let i = 0; i < count; i += 1) {
      let length = 0;
      const digitsStart = at;
      while (at < output.length && output[at]! >= ZERO && output[at]! <= NINE) {
        length = length * 10 + (output[at]! - ZERO);
        at += 1;
        if (at - digitsStart > 9) throw new FieldDecodeError(`malformed framing: field length too long at byte ${digitsStart}`);
      }
      if (at === digitsStart || output[at] !== COLON) throw new FieldDecodeError(`malformed framing: missing field length at byte ${digitsStart}`);
      at += 1;
      if (length > limits.maxFieldBytes) {
        throw new LimitError(`a tmux field is ${length} bytes, over the ${limits.maxFieldBytes}-byte field limit`, 'field_bytes', limits.maxFieldBytes, {
          phase: 'decode',
          delivery: 'observed',
        });
      }
      if (at + length > output.length) throw new FieldDecodeError(`malformed framing: field runs past the end of the output at byte ${at}`);
      values.push(output.subarray(at, at + length));
      at += length;
    }
    if (output[at] !== NEWLINE) throw new FieldDecodeError(`malformed framing: row does not end where its lengths say (byte ${at})`);
    at += 1;
    rows.push({ tag, values });
  }
  return rows;
}

const ID_PATTERN = /^[$@%]\d+$/;
const INT_PATTERN = /^-?\d+$/;

/** Decodes one captured field by its catalog type. */
export function decodeField(spec: FieldSpec, raw: Buffer): string | number | boolean | null {
  if (raw.length === 0) {
    if (spec.emptyIsNull) return null;
    if (spec.type === 'string') return '';
    throw new FieldDecodeError(`field ${spec.wire} is empty but must be ${describe(spec.type)}`);
  }
  switch (spec.type) {
    case 'string':
      try {
        return decodeUtf8(raw, `field ${spec.wire}`);
      } catch (cause) {
        throw new FieldDecodeError(`field ${spec.wire} is not valid UTF-8`, { cause });
      }
    case 'id': {
      const text = raw.toString('latin1');
      if (!ID_PATTERN.test(text)) throw new FieldDecodeError(`field ${spec.wire} is not a tmux id`);
      return text;
    }
    case 'int':
    case 'time': {
      const text = raw.toString('latin1');
      if (!INT_PATTERN.test(text)) throw new FieldDecodeError(`field ${spec.wire} is not an integer`);
      return Number(text);
    }
    case 'bool': {
      const text = raw.toString('latin1');
      if (text === '1') return true;
      if (text === '0') return false;
      throw new FieldDecodeError(`field ${spec.wire} is not 0 or 1`);
    }
  }
}

function describe(type: FieldType): string {
  return type === 'int' || type === 'time' ? 'an integer' : type === 'bool' ? '0 or 1' : type === 'id' ? 'a tmux id' : 'text';
}

/** The specs of a table in declaration order, for building formats and reading rows. */
export function tableSpecs(table: FieldTable): FieldSpec[] {
  return Object.values(table);
}
