/* eslint-disable @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging --
   each record class merges with the interface of its catalog fields, whose readers are defined at runtime from the catalog. */
import { performance } from 'node:perf_hooks';
import {
  CLIENT_FIELDS,
  PANE_FIELDS,
  SESSION_FIELDS,
  WINDOW_FIELDS,
  WINDOW_LINK_FIELDS,
  type ClientFields,
  type FieldSpec,
  type FieldTable,
  type PaneFields,
  type SessionFields,
  type WindowFields,
} from './catalog.js';
import { Criteria, type CriteriaEntity, type EvaluableRecord } from './criteria.js';
import { ArgumentError, FieldDecodeError, IncompleteSnapshotError, LimitError, MultipleMatchesError, NoMatchError, UnsupportedFeatureError } from './errors.js';
import { DEFAULT_FRAMING_LIMITS, decodeField, parseFramedRows, rowFormat, tableSpecs, type FramingLimits, type RawRow } from './framing.js';
import type { Pane, Session, Window, WindowLink } from './handles.js';
import type { PaneId, SessionId, WindowId } from './ids.js';
import type { Server } from './server.js';

let nextCaptureId = 1;

/** A table's fields in row order and each one's place by wire name, built once rather than per captured row. */
interface TableLayout {
  readonly specs: readonly FieldSpec[];
  readonly indexByWire: ReadonlyMap<string, number>;
}

const layoutsByTable = new WeakMap<FieldTable, TableLayout>();

function layoutOf(table: FieldTable): TableLayout {
  let layout = layoutsByTable.get(table);
  if (!layout) {
    const specs = tableSpecs(table);
    layout = { specs, indexByWire: new Map(specs.map((s, i) => [s.wire, i])) };
    layoutsByTable.set(table, layout);
  }
  return layout;
}

type FieldValue = string | number | boolean | null;

/**
 * One captured row. It keeps the row's values as parsed and decodes a field only when read: a
 * caller reads a few of a pane's fields, and a snapshot of many panes is built on every map.
 */
abstract class SnapshotRecord implements EvaluableRecord {
  abstract readonly entity: CriteriaEntity;
  protected readonly graph: SnapshotGraph;
  private readonly layout: TableLayout;
  private readonly row: RawRow;
  /** Where this record's fields start in its row (a window row carries its link's fields first). */
  private readonly first: number;
  /** Decoded fields by position; a hole is a field not read yet (no field decodes to undefined). */
  private readonly decoded: (FieldValue | undefined)[] = [];

  constructor(graph: SnapshotGraph, table: FieldTable, row: RawRow, first = 0) {
    this.graph = graph;
    this.layout = layoutOf(table);
    this.row = row;
    this.first = first;
  }

  /** The exact bytes tmux printed for a field. */
  raw(wire: string): Buffer {
    return this.rawAt(this.indexOf(wire));
  }

  /** The field decoded by its catalog type; invalid UTF-8 raises FieldDecodeError. */
  value(wire: string): FieldValue {
    return this.valueAt(this.indexOf(wire));
  }

  abstract related(relation: string): readonly EvaluableRecord[];

  /** The binding that captured this record, which alone can turn it into a handle. */
  get binding(): Server | undefined {
    return this.graph.binding;
  }

  /** Fields by tmux name; text that is not valid UTF-8 is shown with replacement characters. */
  toJSON(): Record<string, FieldValue> {
    const out: Record<string, FieldValue> = {};
    for (const [index, spec] of this.layout.specs.entries()) {
      try {
        out[spec.wire] = this.valueAt(index);
      } catch (error) {
        if (!(error instanceof FieldDecodeError) || spec.type !== 'string') throw error;
        out[spec.wire] = this.rawAt(index).toString('utf8');
      }
    }
    return out;
  }

  private valueAt(index: number): FieldValue {
    let value = this.decoded[index];
    if (value === undefined) {
      value = decodeField(this.layout.specs[index]!, this.rawAt(index));
      this.decoded[index] = value;
    }
    return value;
  }

  /** The bytes of this record's field at `index` (its place in the table, not in the row). */
  private rawAt(index: number): Buffer {
    return this.row.field(this.first + index);
  }

  private indexOf(wire: string): number {
    const index = this.layout.indexByWire.get(wire);
    if (index === undefined) throw new ArgumentError(`${this.entity} has no field ${wire}`);
    return index;
  }
}

function defineReaders(proto: object, table: FieldTable): void {
  for (const [key, spec] of Object.entries(table)) {
    Object.defineProperty(proto, key, {
      get(this: SnapshotRecord) {
        return this.value(spec.wire);
      },
      enumerable: false,
    });
  }
}

export interface SessionRecord extends SessionFields {}
export class SessionRecord extends SnapshotRecord {
  readonly entity = 'session' as const;

  /** The session's handle on the binding that captured it (no tmux I/O). */
  ref(): Session {
    return this.graph.capturer('session').session(this.sessionId);
  }

  /** Window links of this session in index order. */
  links(): readonly WindowLinkRecord[] {
    return this.graph.linksOfSession(this.sessionId as SessionId);
  }

  windows(): Selection<WindowRecord> {
    return new Selection('window', this.links().map((l) => l.window()));
  }

  panes(): Selection<PaneRecord> {
    return new Selection('pane', this.windows().toArray().flatMap((w) => w.panes().toArray()));
  }

  related(relation: string): readonly EvaluableRecord[] {
    if (relation === 'windows') return this.windows().toArray();
    if (relation === 'panes') return this.panes().toArray();
    throw new ArgumentError(`session has no relation ${relation}`);
  }
}
defineReaders(SessionRecord.prototype, SESSION_FIELDS);

export class WindowLinkRecord {
  readonly sessionId: SessionId;
  readonly windowIndex: number;
  readonly windowId: WindowId;
  readonly windowActive: boolean;
  private readonly graph: SnapshotGraph;

  constructor(graph: SnapshotGraph, row: RawRow) {
    this.graph = graph;
    const specs = tableSpecs(WINDOW_LINK_FIELDS);
    this.sessionId = decodeField(specs[0]!, row.field(0)) as SessionId;
    this.windowIndex = decodeField(specs[1]!, row.field(1)) as number;
    this.windowId = decodeField(specs[2]!, row.field(2)) as WindowId;
    this.windowActive = decodeField(specs[3]!, row.field(3)) as boolean;
    Object.freeze(this);
  }

  session(): SessionRecord {
    return this.graph.sessionById(this.sessionId);
  }

  window(): WindowRecord {
    return this.graph.windowById(this.windowId);
  }

  get binding(): Server | undefined {
    return this.graph.binding;
  }

  /** The link's handle on the binding that captured it: session, index and window together. */
  ref(): WindowLink {
    return this.graph.capturer('window link').windowLink(this.sessionId, this.windowIndex, this.windowId);
  }

  toJSON(): Record<string, string | number | boolean> {
    return { session_id: this.sessionId, window_index: this.windowIndex, window_id: this.windowId, window_active: this.windowActive };
  }
}

export interface WindowRecord extends WindowFields {}
export class WindowRecord extends SnapshotRecord {
  readonly entity = 'window' as const;

  ref(): Window {
    return this.graph.capturer('window').window(this.windowId);
  }

  links(): readonly WindowLinkRecord[] {
    return this.graph.linksOfWindow(this.windowId as WindowId);
  }

  sessions(): Selection<SessionRecord> {
    return new Selection('session', this.links().map((l) => l.session()));
  }

  panes(): Selection<PaneRecord> {
    return new Selection('pane', this.graph.panesOfWindow(this.windowId as WindowId));
  }

  related(relation: string): readonly EvaluableRecord[] {
    if (relation === 'sessions') return this.sessions().toArray();
    if (relation === 'panes') return this.panes().toArray();
    throw new ArgumentError(`window has no relation ${relation}`);
  }
}
defineReaders(WindowRecord.prototype, WINDOW_FIELDS);

export interface PaneRecord extends PaneFields {}
export class PaneRecord extends SnapshotRecord {
  readonly entity = 'pane' as const;

  /**
   * A pane user option captured with the snapshot (SnapshotOptions.paneOptions), as text (bytes
   * that are not UTF-8 shown as replacement characters, since other programs write these);
   * undefined when the pane has none (tmux prints an unset option and an empty one alike).
   */
  userOption(name: string): string | undefined {
    return this.graph.paneUserOption(this.paneId as PaneId, name);
  }

  ref(): Pane {
    return this.graph.capturer('pane').pane(this.paneId);
  }

  window(): WindowRecord {
    return this.graph.windowById(this.windowId as WindowId);
  }

  /** Every session the pane's window is linked into (usually one), in listing order. */
  sessions(): Selection<SessionRecord> {
    return this.window().sessions();
  }

  /** The first session listing the pane's window, with the window's index there. */
  primaryLink(): WindowLinkRecord {
    const link = this.window().links()[0];
    if (!link) throw new IncompleteSnapshotError(`window ${this.windowId} has no captured session link`);
    return link;
  }

  related(relation: string): readonly EvaluableRecord[] {
    if (relation === 'window') return [this.window()];
    if (relation === 'sessions') return this.sessions().toArray();
    throw new ArgumentError(`pane has no relation ${relation}`);
  }
}
defineReaders(PaneRecord.prototype, PANE_FIELDS);

export interface ClientRecord extends ClientFields {}
export class ClientRecord extends SnapshotRecord {
  readonly entity = 'client' as const;

  /**
   * Always refused: a client's name, tty or pid names whichever client holds it now, not
   * this observed one, so a client record never becomes a command target.
   */
  ref(): never {
    throw new UnsupportedFeatureError('a client record cannot become a command target: its name, tty and pid do not identify this client over time');
  }

  related(relation: string): readonly EvaluableRecord[] {
    throw new ArgumentError(`client has no relation ${relation}`);
  }
}
defineReaders(ClientRecord.prototype, CLIENT_FIELDS);

type AnyRecord = SessionRecord | WindowRecord | PaneRecord | ClientRecord;

/** An ordered, captured set of records; filtering never refreshes it. */
export class Selection<R extends AnyRecord> implements Iterable<R> {
  readonly entity: CriteriaEntity;
  private readonly records: readonly R[];

  constructor(entity: CriteriaEntity, records: readonly R[]) {
    this.entity = entity;
    this.records = Object.freeze([...records]);
    Object.freeze(this);
  }

  get size(): number {
    return this.records.length;
  }

  isEmpty(): boolean {
    return this.records.length === 0;
  }

  exists(): boolean {
    return this.records.length > 0;
  }

  [Symbol.iterator](): Iterator<R> {
    return this.records[Symbol.iterator]();
  }

  toArray(): R[] {
    return [...this.records];
  }

  at(index: number): R | undefined {
    return this.records.at(index);
  }

  filter(predicate: (record: R) => boolean): Selection<R> {
    return new Selection(this.entity, this.records.filter(predicate));
  }

  /** Keeps records matching criteria (a Criteria, or an expression for this entity). */
  where(criteria: Criteria | object): Selection<R> {
    const compiled = criteria instanceof Criteria ? criteria : Criteria.build(this.entity, criteria);
    if (compiled.entity !== this.entity) throw new ArgumentError(`${compiled.entity} criteria cannot filter ${this.entity} records`);
    return this.filter((r) => compiled.test(r));
  }

  /** Exactly one record, else NoMatchError or MultipleMatchesError. */
  one(): R {
    if (this.records.length === 0) throw new NoMatchError(`no ${this.entity} matched`);
    if (this.records.length > 1) throw new MultipleMatchesError(this.records.length, `${this.records.length} ${this.entity}s matched where exactly one was expected`);
    return this.records[0]!;
  }

  /** The one record or undefined when none; still rejects ambiguity. */
  oneOrUndefined(): R | undefined {
    if (this.records.length > 1) throw new MultipleMatchesError(this.records.length, `${this.records.length} ${this.entity}s matched where at most one was expected`);
    return this.records[0];
  }

  toJSON(): unknown[] {
    return this.records.map((r) => r.toJSON());
  }
}

const SESSION_SPECS = tableSpecs(SESSION_FIELDS);
const LINK_AND_WINDOW_SPECS = [...tableSpecs(WINDOW_LINK_FIELDS), ...tableSpecs(WINDOW_FIELDS)];
const PANE_SPECS = tableSpecs(PANE_FIELDS);
const CLIENT_SPECS = tableSpecs(CLIENT_FIELDS);
const LINK_COUNT = tableSpecs(WINDOW_LINK_FIELDS).length;

/** The fields each row tag carries, the pane rows with the user options asked for. */
function rowFields(paneOptions: readonly string[]): Readonly<Record<string, readonly FieldSpec[]>> {
  return { S: SESSION_SPECS, W: LINK_AND_WINDOW_SPECS, P: paneSpecs(paneOptions), C: CLIENT_SPECS };
}

function paneSpecs(paneOptions: readonly string[]): FieldSpec[] {
  return [...PANE_SPECS, ...userOptionSpecs(paneOptions)];
}

export interface SnapshotOptions {
  /** Also list clients (off by default). */
  clients?: boolean;
  /**
   * Pane user options (`@name`) to capture with every pane, in the same listing: per-pane
   * values other programs record there (an agent's state, say), read without a command per pane.
   */
  paneOptions?: readonly string[];
  limits?: Partial<FramingLimits>;
}

const USER_OPTION = /^@[A-Za-z0-9_-]{1,64}$/;

/** The options asked for, checked: each a user option name (`@` then letters, digits, _ or -). */
function paneOptionsOf(options: SnapshotOptions): readonly string[] {
  const names = options.paneOptions ?? [];
  for (const name of names) {
    if (typeof name !== 'string' || !USER_OPTION.test(name)) throw new ArgumentError(`${JSON.stringify(name)} is not a pane user option name (@ then letters, digits, _ or -)`);
  }
  return names;
}

/** User options are text; empty is the same as unset. */
function userOptionSpecs(names: readonly string[]): FieldSpec[] {
  return names.map((wire) => Object.freeze({ wire, type: 'string' as const, emptyIsNull: true }));
}

/** Client records from a list-clients reply framed with CLIENT_FORMAT. */
export function parseClientRecords(output: Buffer, binding: Server, limits: Partial<FramingLimits> = {}): ClientRecord[] {
  const graph = new SnapshotGraph(binding);
  graph.add(parseFramedRows(output, { C: CLIENT_SPECS }, { ...DEFAULT_FRAMING_LIMITS, ...limits }));
  return [...graph.clients];
}

/** The row format of one client, as snapshots and listClients() read it. */
export const CLIENT_FORMAT = rowFormat('C', CLIENT_SPECS);

/** The tmux commands one snapshot runs, joined into one client invocation. */
export function snapshotCommands(options: SnapshotOptions = {}): string[][] {
  const commands = [
    ['list-sessions', '-F', rowFormat('S', SESSION_SPECS)],
    ['list-windows', '-a', '-F', rowFormat('W', LINK_AND_WINDOW_SPECS)],
    ['list-panes', '-a', '-F', rowFormat('P', paneSpecs(paneOptionsOf(options)))],
  ];
  if (options.clients) commands.push(['list-clients', '-F', CLIENT_FORMAT]);
  return commands;
}

export interface SnapshotCoverage {
  readonly sessions: true;
  readonly windows: true;
  readonly panes: true;
  readonly clients: boolean;
}

class SnapshotGraph {
  constructor(
    readonly binding: Server | undefined,
    private readonly paneOptions: readonly string[] = [],
  ) {}

  /** The binding records become handles on; refused for records not captured through one. */
  capturer(what: string): Server {
    if (this.binding === undefined) throw new ArgumentError(`this ${what} record was not captured through a binding, so it names nothing to act on`);
    return this.binding;
  }

  readonly sessions = new Map<SessionId, SessionRecord>();
  readonly windows = new Map<WindowId, WindowRecord>();
  readonly panes = new Map<PaneId, PaneRecord>();
  readonly links: WindowLinkRecord[] = [];
  readonly clients: ClientRecord[] = [];
  private readonly linksBySession = new Map<SessionId, WindowLinkRecord[]>();
  private readonly linksByWindow = new Map<WindowId, WindowLinkRecord[]>();
  private readonly panesByWindow = new Map<WindowId, PaneRecord[]>();
  private readonly userOptions = new Map<PaneId, ReadonlyMap<string, Buffer>>();

  add(rows: readonly RawRow[]): void {
    for (const row of rows) {
      switch (row.tag) {
        case 'S': {
          const record = new SessionRecord(this, SESSION_FIELDS, row);
          this.sessions.set(record.sessionId as SessionId, record);
          break;
        }
        case 'W': {
          const link = new WindowLinkRecord(this, row);
          this.links.push(link);
          push(this.linksBySession, link.sessionId, link);
          push(this.linksByWindow, link.windowId, link);
          if (!this.windows.has(link.windowId)) this.windows.set(link.windowId, new WindowRecord(this, WINDOW_FIELDS, row, LINK_COUNT));
          break;
        }
        case 'P': {
          const record = new PaneRecord(this, PANE_FIELDS, row);
          const id = record.paneId as PaneId;
          if (this.panes.has(id)) break; // a window linked into several sessions lists its panes once per link
          this.panes.set(id, record);
          if (this.paneOptions.length > 0) this.userOptions.set(id, new Map(this.paneOptions.map((name, i) => [name, row.field(PANE_SPECS.length + i)])));
          push(this.panesByWindow, record.windowId as WindowId, record);
          break;
        }
        case 'C':
          this.clients.push(new ClientRecord(this, CLIENT_FIELDS, row));
          break;
      }
    }
    for (const list of this.linksBySession.values()) list.sort((a, b) => a.windowIndex - b.windowIndex);
    for (const list of this.panesByWindow.values()) list.sort((a, b) => (a.paneIndex as number) - (b.paneIndex as number));
  }

  check(): void {
    for (const link of this.links) {
      if (!this.sessions.has(link.sessionId)) throw new FieldDecodeError(`window ${link.windowId} is linked into session ${link.sessionId}, which the listing lacks (changed while listing)`);
    }
    for (const pane of this.panes.values()) {
      if (!this.windows.has(pane.windowId as WindowId)) throw new FieldDecodeError(`pane ${pane.paneId} belongs to window ${pane.windowId}, which the listing lacks (changed while listing)`);
    }
  }

  sessionById(id: SessionId): SessionRecord {
    const record = this.sessions.get(id);
    if (!record) throw new IncompleteSnapshotError(`session ${id} is not in this snapshot`);
    return record;
  }

  windowById(id: WindowId): WindowRecord {
    const record = this.windows.get(id);
    if (!record) throw new IncompleteSnapshotError(`window ${id} is not in this snapshot`);
    return record;
  }

  linksOfSession(id: SessionId): readonly WindowLinkRecord[] {
    return this.linksBySession.get(id) ?? [];
  }

  linksOfWindow(id: WindowId): readonly WindowLinkRecord[] {
    return this.linksByWindow.get(id) ?? [];
  }

  panesOfWindow(id: WindowId): readonly PaneRecord[] {
    return this.panesByWindow.get(id) ?? [];
  }

  paneUserOption(id: PaneId, name: string): string | undefined {
    const raw = this.userOptions.get(id)?.get(name);
    if (raw === undefined) throw new IncompleteSnapshotError(`pane option ${name} was not captured; take the snapshot with it in paneOptions`);
    return raw.length === 0 ? undefined : raw.toString('utf8');
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The output bounds of a tmux reply (a spawned client's stdout, a control reply), as LimitError names them. */
const REPLY_BOUNDS: ReadonlySet<string> = new Set(['stdout', 'reply']);

/**
 * A capture cut at a bound as the typed error it is: the snapshot would hold less than the
 * server has. A tmux reply over its own bound counts against the snapshot's bytes. Other errors
 * are returned as they are.
 */
export function incompleteCapture(error: unknown): unknown {
  if (!(error instanceof LimitError)) return error;
  const reply = REPLY_BOUNDS.has(error.limit);
  const problem = reply ? `tmux's listing is over the ${error.maxBytes}-byte bound on a command's reply` : error.message;
  return new IncompleteSnapshotError(`the snapshot cannot cover this server: ${problem}`, { phase: 'decode', delivery: 'observed', limit: reply ? 'snapshot_bytes' : error.limit, cause: error });
}

function capturedRows(output: Buffer, paneOptions: readonly string[], limits: Partial<FramingLimits> | undefined): RawRow[] {
  try {
    return parseFramedRows(output, rowFields(paneOptions), { ...DEFAULT_FRAMING_LIMITS, ...limits });
  } catch (error) {
    throw incompleteCapture(error);
  }
}

/** An immutable, bounded graph of one server's sessions, windows, panes (and clients). */
export class Snapshot {
  readonly captureId: number;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly reads: readonly string[];
  readonly coverage: SnapshotCoverage;
  readonly sessions: Selection<SessionRecord>;
  readonly windows: Selection<WindowRecord>;
  readonly panes: Selection<PaneRecord>;
  readonly links: readonly WindowLinkRecord[];
  private readonly capturedClients: Selection<ClientRecord> | undefined;
  private readonly graph: SnapshotGraph;

  /** `binding`: the server binding that captured it; only its records become handles. */
  constructor(output: Buffer, options: SnapshotOptions & { startedAt?: number; finishedAt?: number; binding?: Server } = {}) {
    const paneOptions = paneOptionsOf(options);
    const rows = capturedRows(output, paneOptions, options.limits);
    const graph = new SnapshotGraph(options.binding, paneOptions);
    graph.add(rows);
    graph.check();
    this.graph = graph;
    this.captureId = nextCaptureId++;
    this.startedAt = options.startedAt ?? performance.timeOrigin + performance.now();
    this.finishedAt = options.finishedAt ?? this.startedAt;
    this.reads = Object.freeze(snapshotCommands(options).map((c) => c[0]!));
    this.coverage = Object.freeze({ sessions: true, windows: true, panes: true, clients: options.clients === true });
    this.sessions = new Selection('session', [...graph.sessions.values()]);
    this.windows = new Selection('window', [...graph.windows.values()]);
    this.panes = new Selection('pane', [...graph.panes.values()]);
    this.links = Object.freeze([...graph.links]);
    this.capturedClients = options.clients ? new Selection('client', graph.clients) : undefined;
    Object.freeze(this);
  }

  get clients(): Selection<ClientRecord> {
    if (!this.capturedClients) throw new IncompleteSnapshotError('clients were not captured; take the snapshot with { clients: true }');
    return this.capturedClients;
  }

  session(id: SessionId): SessionRecord | undefined {
    return this.graph.sessions.get(id);
  }

  window(id: WindowId): WindowRecord | undefined {
    return this.graph.windows.get(id);
  }

  pane(id: PaneId): PaneRecord | undefined {
    return this.graph.panes.get(id);
  }

  toJSON(): Record<string, unknown> {
    return {
      capture_id: this.captureId,
      sessions: this.sessions.toJSON(),
      window_links: this.links.map((l) => l.toJSON()),
      windows: this.windows.toJSON(),
      panes: this.panes.toJSON(),
      ...(this.capturedClients ? { clients: this.capturedClients.toJSON() } : {}),
    };
  }
}
