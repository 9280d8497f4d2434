import type { PaneId, SessionId, WindowId } from '../ids.js';
import { ControlProtocolError } from './errors.js';

/**
 * The tmux control-mode wire protocol (tmux(1) "CONTROL MODE"), as pure functions over bytes.
 * Each command's reply is a guarded block: `%begin TIME NUMBER FLAGS`, raw body lines, then
 * `%end` or `%error` with the same three fields. Everything outside a block is a notification
 * line. Only an exact closing guard ends a block, so body text that merely looks like one
 * stays body; a terminator outside any block means the stream can no longer be trusted.
 */

export const MAX_LINE_BYTES = 256 * 1024;
export const MAX_BLOCK_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;
const PERCENT = 0x25;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const BEGIN_PREFIX = Buffer.from('%begin ');
const END_PREFIX = Buffer.from('%end ');
const ERROR_PREFIX = Buffer.from('%error ');

/** One reply block exactly as tmux framed it. */
export interface GuardedBlock {
  readonly time: number;
  readonly number: number;
  /** 1 for commands this client sent; 0 for the attach reply and hooks run on its behalf. */
  readonly flags: number;
  /** %end (true) or %error (false): whether tmux reports the command as failed, not what a program did. */
  readonly guardSuccess: boolean;
  /** The lines between the guards, each with its newline. */
  readonly body: Buffer;
  readonly opening: Buffer;
  readonly closing: Buffer;
  /** The body's full size; larger than body.length when the body went over the block bound. */
  readonly bodyBytes: number;
  readonly truncated: boolean;
}

export interface ParserSink {
  block(block: GuardedBlock): void;
  /** A line outside any block, without its newline: a view into the pushed chunk, copy it to keep it. */
  notification(line: Buffer): void;
}

export interface ParserLimits {
  maxLineBytes: number;
  maxBlockBytes: number;
}

interface OpenBlock {
  time: number;
  number: number;
  flags: number;
  /** The %begin line, then each kept body line, as (buffer, start, end) triples. */
  spans: (Buffer | number)[];
  /** Where "TIME NUMBER FLAGS" sits in the %begin line; the closing line must repeat it exactly. */
  guardBuffer: Buffer;
  guardStart: number;
  guardEnd: number;
  bodyBytes: number;
  keptBytes: number;
  truncated: boolean;
}

/** A closed block: one buffer holding the opening line, the body and the closing line. */
class Block implements GuardedBlock {
  readonly body: Buffer;

  constructor(
    readonly time: number,
    readonly number: number,
    readonly flags: number,
    readonly guardSuccess: boolean,
    readonly bodyBytes: number,
    readonly truncated: boolean,
    private readonly bytes: Buffer,
    private readonly bodyStart: number,
    private readonly bodyEnd: number,
  ) {
    this.body = bytes.subarray(bodyStart, bodyEnd);
    Object.freeze(this);
  }

  get opening(): Buffer {
    return this.bytes.subarray(0, this.bodyStart);
  }

  get closing(): Buffer {
    return this.bytes.subarray(this.bodyEnd);
  }
}

/**
 * Splits a byte stream into lines (however it was chunked) and lines into blocks and
 * notifications. A framing violation throws ControlProtocolError and every later push
 * throws it again: the caller fails the connection closed.
 */
export class ControlParser {
  private readonly limits: ParserLimits;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private open: OpenBlock | undefined;
  private failure: ControlProtocolError | undefined;

  constructor(
    private readonly sink: ParserSink,
    limits: Partial<ParserLimits> = {},
  ) {
    this.limits = { maxLineBytes: MAX_LINE_BYTES, maxBlockBytes: MAX_BLOCK_BYTES, ...limits };
  }

  /**
   * Takes the next bytes of the stream. Lines of an open block are referenced in place
   * until the block ends, so a chunk must not be changed after it is pushed.
   */
  push(chunk: Buffer): void {
    if (this.failure) throw this.failure;
    try {
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(NEWLINE, start);
        if (newline === -1) {
          this.keepPartial(chunk.subarray(start));
          return;
        }
        if (this.partialBytes > 0) {
          const length = this.partialBytes + newline - start;
          this.checkLength(length);
          this.partial.push(chunk.subarray(start, newline));
          const line = Buffer.concat(this.partial, length);
          this.partial = [];
          this.partialBytes = 0;
          this.line(line, 0, line.length);
        } else {
          this.checkLength(newline - start);
          this.line(chunk, start, newline);
        }
        start = newline + 1;
      }
    } catch (error) {
      if (error instanceof ControlProtocolError) this.failure = error;
      throw error;
    }
  }

  private keepPartial(piece: Buffer): void {
    this.checkLength(this.partialBytes + piece.length);
    // A copy: the chunk may be large and the piece small.
    this.partial.push(Buffer.from(piece));
    this.partialBytes += piece.length;
  }

  private checkLength(bytes: number): void {
    if (bytes > this.limits.maxLineBytes) {
      throw new ControlProtocolError(`a control-mode line is longer than ${this.limits.maxLineBytes} bytes; the connection is failed closed`);
    }
  }

  /** One line, bytes [start, end) of buffer, without its newline. */
  private line(buffer: Buffer, start: number, end: number): void {
    const open = this.open;
    if (open) {
      if (buffer[start] === PERCENT && closes(buffer, start, end, open)) {
        this.open = undefined;
        this.sink.block(closeBlock(open, buffer, start, end));
        return;
      }
      const size = end - start + 1;
      open.bodyBytes += size;
      if (!open.truncated && open.keptBytes + size <= this.limits.maxBlockBytes) {
        open.spans.push(buffer, start, end);
        open.keptBytes += size;
      } else {
        open.truncated = true;
      }
      return;
    }
    if (buffer[start] === PERCENT) {
      const begun = hasPrefix(buffer, start, end, BEGIN_PREFIX) ? openBlock(buffer, start, end) : undefined;
      if (begun) {
        this.open = begun;
        return;
      }
      if (hasPrefix(buffer, start, end, END_PREFIX) || hasPrefix(buffer, start, end, ERROR_PREFIX)) {
        throw new ControlProtocolError('tmux sent a block terminator outside any block (output that imitates the protocol?); the connection is failed closed');
      }
    }
    this.sink.notification(buffer.subarray(start, end));
  }
}

/** A %begin line whose fields are "TIME NUMBER FLAGS": three decimal numbers and nothing else. */
function openBlock(buffer: Buffer, start: number, end: number): OpenBlock | undefined {
  const guardStart = start + BEGIN_PREFIX.length;
  const values = [0, 0, 0];
  let field = 0;
  let digits = 0;
  for (let i = guardStart; i <= end; i += 1) {
    const byte = i === end ? SPACE : buffer[i]!;
    if (byte === SPACE) {
      if (digits === 0 || field === 3) return undefined;
      field += 1;
      digits = 0;
    } else if (byte >= 0x30 && byte <= 0x39 && digits < 15 && field < 3) {
      values[field] = values[field]! * 10 + (byte - 0x30);
      digits += 1;
    } else {
      return undefined;
    }
  }
  if (field !== 3) return undefined;
  return {
    time: values[0]!,
    number: values[1]!,
    flags: values[2]!,
    spans: [buffer, start, end],
    guardBuffer: buffer,
    guardStart,
    guardEnd: end,
    bodyBytes: 0,
    keptBytes: 0,
    truncated: false,
  };
}

function closes(buffer: Buffer, start: number, end: number, open: OpenBlock): boolean {
  const at = hasPrefix(buffer, start, end, END_PREFIX) ? start + END_PREFIX.length : hasPrefix(buffer, start, end, ERROR_PREFIX) ? start + ERROR_PREFIX.length : -1;
  return at !== -1 && end - at === open.guardEnd - open.guardStart && buffer.compare(open.guardBuffer, open.guardStart, open.guardEnd, at, end) === 0;
}

function hasPrefix(buffer: Buffer, start: number, end: number, prefix: Buffer): boolean {
  if (end - start < prefix.length) return false;
  for (let i = 0; i < prefix.length; i += 1) if (buffer[start + i] !== prefix[i]) return false;
  return true;
}

function closeBlock(open: OpenBlock, buffer: Buffer, start: number, end: number): GuardedBlock {
  const spans = open.spans;
  const openingLength = (spans[2] as number) - (spans[1] as number);
  const bytes = Buffer.allocUnsafe(openingLength + open.keptBytes + end - start);
  let at = (spans[0] as Buffer).copy(bytes, 0, spans[1] as number, spans[2] as number);
  for (let i = 3; i < spans.length; i += 3) {
    at += (spans[i] as Buffer).copy(bytes, at, spans[i + 1] as number, spans[i + 2] as number);
    bytes[at] = NEWLINE;
    at += 1;
  }
  buffer.copy(bytes, at, start, end);
  const success = buffer[start + 2] === 0x6e; // %en(d), not %er(ror)
  return new Block(open.time, open.number, open.flags, success, open.bodyBytes, open.truncated, bytes, openingLength, at);
}

/** Undoes tmux's %output escaping: `\ooo` is one byte; every other byte is itself. */
export function unescapeOutput(value: Buffer): Buffer {
  let at = value.indexOf(BACKSLASH);
  if (at === -1) return Buffer.from(value);
  const out = Buffer.allocUnsafe(value.length);
  let length = value.copy(out, 0, 0, at);
  while (at < value.length) {
    const byte = value[at]!;
    if (byte === BACKSLASH && at + 3 < value.length && isOctal(value[at + 1]) && isOctal(value[at + 2]) && isOctal(value[at + 3])) {
      out[length] = ((value[at + 1]! - 0x30) << 6) | ((value[at + 2]! - 0x30) << 3) | (value[at + 3]! - 0x30);
      at += 4;
    } else {
      out[length] = byte;
      at += 1;
    }
    length += 1;
  }
  return out.subarray(0, length);
}

function isOctal(byte: number | undefined): boolean {
  return byte !== undefined && byte >= 0x30 && byte <= 0x37;
}

export type ControlEventKind =
  | 'output'
  | 'extended-output'
  | 'pause'
  | 'continue'
  | 'pane-mode-changed'
  | 'window-add'
  | 'window-close'
  | 'window-renamed'
  | 'window-pane-changed'
  | 'unlinked-window-add'
  | 'unlinked-window-close'
  | 'unlinked-window-renamed'
  | 'layout-change'
  | 'session-changed'
  | 'session-renamed'
  | 'session-window-changed'
  | 'sessions-changed'
  | 'client-session-changed'
  | 'client-detached'
  | 'subscription-changed'
  | 'paste-buffer-changed'
  | 'paste-buffer-deleted'
  | 'message'
  | 'config-error'
  | 'exit'
  | 'unknown'
  /** Not from tmux: drover's explicit evidence that events were lost or continuity broke. */
  | 'gap';

/** Kinds that describe sessions, windows, panes or layouts changing (not pane output). */
export const TOPOLOGY_KINDS: readonly ControlEventKind[] = Object.freeze([
  'window-add',
  'window-close',
  'window-renamed',
  'window-pane-changed',
  'unlinked-window-add',
  'unlinked-window-close',
  'unlinked-window-renamed',
  'layout-change',
  'session-changed',
  'session-renamed',
  'session-window-changed',
  'sessions-changed',
  'client-session-changed',
  'pane-mode-changed',
]);

/** A notification's decoded fields; fields a kind does not carry stay undefined. */
export interface DecodedNotification {
  readonly kind: ControlEventKind;
  /** The line exactly as received, without its newline (empty for gaps). */
  readonly raw: Buffer;
  readonly pane?: PaneId;
  readonly window?: WindowId;
  readonly session?: SessionId;
  /** Pane output bytes, unescaped (output, extended-output). */
  readonly data?: Buffer;
  /** Window, session, subscription or paste-buffer name. */
  readonly name?: string;
  /** The control or terminal client a client-* notification is about. */
  readonly client?: string;
  /** A subscription's new value, a message's text. */
  readonly value?: string;
  readonly windowIndex?: number;
  /** How long tmux held extended output before sending it. */
  readonly ageMs?: number;
  readonly layout?: string;
  readonly visibleLayout?: string;
  readonly windowFlags?: string;
  /** %exit's reason, or why a gap was recorded. */
  readonly reason?: string;
}

const PANE = /^%\d+$/;
const WINDOW = /^@\d+$/;
const SESSION = /^\$\d+$/;

/** Splits off `count` space-separated fields; the remainder (which may hold spaces) comes last. */
function fields(line: Buffer, count: number): { parts: string[]; rest: Buffer | undefined } {
  const parts: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i += 1) {
    const space = line.indexOf(SPACE, at);
    if (space === -1) {
      parts.push(line.subarray(at).toString('latin1'));
      return { parts, rest: undefined };
    }
    parts.push(line.subarray(at, space).toString('latin1'));
    at = space + 1;
  }
  return { parts, rest: line.subarray(at) };
}

/** The value after reserved fields: everything past the first lone ":" field. */
function afterColon(rest: Buffer | undefined): { before: string[]; value: Buffer } | undefined {
  if (!rest) return undefined;
  const before: string[] = [];
  let at = 0;
  for (;;) {
    if (rest[at] === 0x3a && (at + 1 === rest.length || rest[at + 1] === SPACE)) {
      return { before, value: rest.subarray(Math.min(rest.length, at + 2)) };
    }
    const space = rest.indexOf(SPACE, at);
    if (space === -1) return undefined;
    before.push(rest.subarray(at, space).toString('latin1'));
    at = space + 1;
  }
}

function idOr<T extends string>(pattern: RegExp, value: string | undefined): T | undefined {
  return value !== undefined && pattern.test(value) ? (value as T) : undefined;
}

/**
 * Decodes one notification line. Lines drover does not recognise, and recognised lines
 * whose fields are malformed, become `unknown` with their raw bytes.
 */
export function decodeNotification(line: Buffer): DecodedNotification {
  const raw = Buffer.from(line);
  const unknown: DecodedNotification = { kind: 'unknown', raw };
  if (raw[0] !== PERCENT) return unknown;
  const { parts, rest } = fields(raw, 1);
  const word = parts[0]!.slice(1);
  const text = (bytes: Buffer | undefined): string => (bytes ?? Buffer.alloc(0)).toString('utf8');
  switch (word) {
    case 'output': {
      const f = fields(raw, 2);
      const pane = idOr<PaneId>(PANE, f.parts[1]);
      if (!pane) return unknown;
      return { kind: 'output', raw, pane, data: unescapeOutput(f.rest ?? Buffer.alloc(0)) };
    }
    case 'extended-output': {
      const f = fields(raw, 3);
      const pane = idOr<PaneId>(PANE, f.parts[1]);
      const tail = afterColon(f.rest);
      const age = Number(f.parts[2]);
      if (!pane || !tail || !Number.isFinite(age)) return unknown;
      return { kind: 'extended-output', raw, pane, ageMs: age, data: unescapeOutput(tail.value) };
    }
    case 'pause':
    case 'continue':
    case 'pane-mode-changed': {
      const pane = idOr<PaneId>(PANE, rest?.toString('latin1'));
      return pane ? { kind: word, raw, pane } : unknown;
    }
    case 'window-add':
    case 'window-close':
    case 'unlinked-window-add':
    case 'unlinked-window-close': {
      const window = idOr<WindowId>(WINDOW, rest?.toString('latin1'));
      return window ? { kind: word, raw, window } : unknown;
    }
    case 'window-renamed':
    case 'unlinked-window-renamed': {
      const f = fields(raw, 2);
      const window = idOr<WindowId>(WINDOW, f.parts[1]);
      if (!window) return unknown;
      // unlinked-window-renamed carries no name before tmux 3.3.
      return f.rest === undefined ? { kind: word, raw, window } : { kind: word, raw, window, name: text(f.rest) };
    }
    case 'window-pane-changed': {
      const f = fields(raw, 3);
      const window = idOr<WindowId>(WINDOW, f.parts[1]);
      const pane = idOr<PaneId>(PANE, f.parts[2]);
      return window && pane && f.rest === undefined ? { kind: word, raw, window, pane } : unknown;
    }
    case 'layout-change': {
      const f = fields(raw, 4);
      const window = idOr<WindowId>(WINDOW, f.parts[1]);
      if (!window || f.parts.length < 3) return unknown;
      return { kind: word, raw, window, layout: f.parts[2], visibleLayout: f.parts[3], windowFlags: f.rest === undefined ? undefined : text(f.rest) };
    }
    case 'session-changed': {
      const f = fields(raw, 2);
      const session = idOr<SessionId>(SESSION, f.parts[1]);
      return session ? { kind: word, raw, session, name: text(f.rest) } : unknown;
    }
    case 'session-renamed': {
      // tmux 3.3 and later name the session id first; earlier versions send only the name.
      const f = fields(raw, 2);
      const session = idOr<SessionId>(SESSION, f.parts[1]);
      if (session && f.rest !== undefined) return { kind: word, raw, session, name: text(f.rest) };
      return { kind: word, raw, name: text(rest) };
    }
    case 'session-window-changed': {
      const f = fields(raw, 3);
      const session = idOr<SessionId>(SESSION, f.parts[1]);
      const window = idOr<WindowId>(WINDOW, f.parts[2]);
      return session && window && f.rest === undefined ? { kind: word, raw, session, window } : unknown;
    }
    case 'client-session-changed': {
      const f = fields(raw, 3);
      const session = idOr<SessionId>(SESSION, f.parts[2]);
      return session && f.parts[1] ? { kind: word, raw, client: f.parts[1], session, name: text(f.rest) } : unknown;
    }
    case 'sessions-changed':
      return rest === undefined ? { kind: word, raw } : unknown;
    case 'client-detached':
      return rest === undefined ? unknown : { kind: word, raw, client: text(rest) };
    case 'paste-buffer-changed':
    case 'paste-buffer-deleted':
      return rest === undefined ? unknown : { kind: word, raw, name: text(rest) };
    case 'message':
    case 'config-error':
      return { kind: word, raw, value: text(rest) };
    case 'exit':
      return rest === undefined ? { kind: word, raw } : { kind: word, raw, reason: text(rest) };
    case 'subscription-changed': {
      const f = fields(raw, 6);
      const tail = afterColon(f.rest);
      if (f.parts.length < 6 || !tail) return unknown;
      const index = Number(f.parts[4]);
      return {
        kind: word,
        raw,
        name: f.parts[1],
        session: idOr<SessionId>(SESSION, f.parts[2]),
        window: idOr<WindowId>(WINDOW, f.parts[3]),
        windowIndex: Number.isInteger(index) ? index : undefined,
        pane: idOr<PaneId>(PANE, f.parts[5]),
        value: text(tail.value),
      };
    }
    default:
      return unknown;
  }
}
