import { randomBytes } from 'node:crypto';
import { FieldDecodeError, LimitError } from './errors.js';
import type { FieldSpec, FieldTable, FieldType } from './catalog.js';
import { decodeUtf8 } from '../process/errors.js';

/**
 * Rows are framed with tmux's own length operator: every field is written as
 * `#{n:var}:#{var}`, its byte length, a colon, then exactly that many bytes. No value (tabs,
 * newlines, the separator itself, invalid UTF-8) can break a row apart, and a mismatch is
 * detected instead of silently misread.
 *
 * A volatile field (one tmux reads from the system at each mention, such as a pane's running
 * command) would be read twice that way, and a program starting between the two reads would
 * tear the row. It is named once and followed by an end marker: random per drover process, so
 * no value can carry it by chance.
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

/** What ends a volatile field's bytes (letters and digits only: nothing tmux's format language reads). */
export const VOLATILE_FIELD_END = `dRvEnD${randomBytes(12).toString('hex')}`;
const VOLATILE_END_BYTES = Buffer.from(VOLATILE_FIELD_END, 'latin1');

/** A tmux format printing one framed row: a one-letter tag, then each field length-prefixed (or end-marked when volatile). */
export function rowFormat(tag: string, fields: readonly FieldSpec[]): string {
  return tag + fields.map((f) => (f.volatile ? `#{${f.wire}}${VOLATILE_FIELD_END}` : `#{n:${f.wire}}:#{${f.wire}}`)).join('');
}

/**
 * One framed row: its tag and where each field's bytes lie in the listing. A field's bytes are
 * taken (a view, not a copy) only when read: a snapshot of many panes is read a few fields each.
 */
export class RawRow {
  constructor(
    readonly tag: string,
    private readonly output: Buffer,
    /** Start and end offset of each field, in order. */
    private readonly bounds: readonly number[],
  ) {}

  get width(): number {
    return this.bounds.length / 2;
  }

  /** The bytes of field `index` (0-based, in row order). */
  field(index: number): Buffer {
    if (!Number.isInteger(index) || index < 0 || index >= this.width) throw new RangeError(`row ${this.tag} has no field ${index} (it has ${this.width})`);
    return this.output.subarray(this.bounds[2 * index], this.bounds[2 * index + 1]);
  }

  /** Every field's bytes, in row order. */
  get values(): Buffer[] {
    return Array.from({ length: this.width }, (_, index) => this.field(index));
  }
}

const COLON = 0x3a;
const NEWLINE = 0x0a;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * Splits framed output into rows. `rowFields` gives, per tag, the fields its rows carry, as
 * rowFormat wrote them. Anything unexpected — an unknown tag, a bad length, a missing end — fails.
 */
export function parseFramedRows(output: Buffer, rowFields: Readonly<Record<string, readonly FieldSpec[]>>, limits: FramingLimits = DEFAULT_FRAMING_LIMITS): RawRow[] {
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
    const fields = Object.hasOwn(rowFields, tag) ? rowFields[tag] : undefined;
    if (fields === undefined) throw new FieldDecodeError(`malformed framing: unexpected row tag at byte ${at}`);
    at += 1;
    const bounds: number[] = [];
    for (const field of fields) {
      if (field.volatile) {
        const end = output.indexOf(VOLATILE_END_BYTES, at);
        if (end < 0) throw new FieldDecodeError(`malformed framing: field ${field.wire} has no end marker after byte ${at}`);
        checkFieldLength(end - at, limits);
        bounds.push(at, end);
        at = end + VOLATILE_END_BYTES.length;
        continue;
      }
      let length = 0;
      const digitsStart = at;
      while (at < output.length && output[at]! >= ZERO && output[at]! <= NINE) {
        length = length * 10 + (output[at]! - ZERO);
        at += 1;
        if (at - digitsStart > 9) throw new FieldDecodeError(`malformed framing: field length too long at byte ${digitsStart}`);
      }
      if (at === digitsStart || output[at] !== COLON) throw new FieldDecodeError(`malformed framing: missing field length at byte ${digitsStart}`);
      at += 1;
      checkFieldLength(length, limits);
      if (at + length > output.length) throw new FieldDecodeError(`malformed framing: field runs past the end of the output at byte ${at}`);
      bounds.push(at, at + length);
      at += length;
    }
    if (output[at] !== NEWLINE) throw new FieldDecodeError(`malformed framing: row does not end where its lengths say (byte ${at})`);
    at += 1;
    rows.push(new RawRow(tag, output, bounds));
  }
  return rows;
}

function checkFieldLength(length: number, limits: FramingLimits): void {
  if (length > limits.maxFieldBytes) {
    throw new LimitError(`a tmux field is ${length} bytes, over the ${limits.maxFieldBytes}-byte field limit`, 'field_bytes', limits.maxFieldBytes, {
      phase: 'decode',
      delivery: 'observed',
    });
  }
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
