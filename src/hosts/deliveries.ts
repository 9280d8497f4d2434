/**
 * The deliveries a machine remembers by id, so that a prompt resent after a lost answer (a link
 * cut mid-delivery, a caller killed) is never typed twice. Every delivery given an id is claimed
 * here before anything is typed (state `started`) and its receipt recorded when it ends; a
 * delivery whose id is already here is answered from the record instead of typing again.
 *
 * One small file per id in a directory of drover's state: a claim is one atomic link(2) of a
 * complete file (two callers racing for one id: exactly one wins, and nobody reads a half-written
 * record); the end replaces it in one rename. Records are kept a day, and at most the newest
 * thousand; older ones are dropped when a new one is claimed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ArgumentError, formatTimestamp, isProcessAlive, wallMicros, writeFileAtomic, writeFileBeside } from '../process/index.js';

/** What a delivery id may be: it names a file, and it is typed into resend commands. */
const DELIVERY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const DELIVERY_RETENTION_MS = 24 * 60 * 60 * 1000;
export const DELIVERY_RETENTION_COUNT = 1000;

/** What is wrong with a delivery id, or undefined when it is one. */
export function deliveryIdProblem(id: string): string | undefined {
  if (DELIVERY_ID_PATTERN.test(id)) return undefined;
  return `${JSON.stringify(id)} is not a delivery id (1 to 128 letters, digits, . _ -, starting with a letter or digit)`;
}

/** A fresh id for a delivery the caller named none for. */
export function newDeliveryId(): string {
  return `dlv-${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;
}

/**
 * One remembered delivery. `started`: claimed, typing may have begun; `ended`: its answer is
 * `document` with `exit_status`; `interrupted`: it failed after typing may have begun, without
 * a receipt (`problem` says why).
 */
export interface DeliveryRecord {
  readonly delivery_id: string;
  readonly state: 'started' | 'ended' | 'interrupted';
  readonly pane: string;
  /** The SHA-256 of the text delivered (hex): a resend under the id must carry the same text. Absent in older records. */
  readonly text_sha256?: string;
  /** The process delivering, while started: a started record whose process is gone was cut off. */
  readonly pid: number;
  readonly started_at: string;
  readonly ended_at?: string;
  readonly exit_status?: number;
  readonly document?: Record<string, unknown>;
  readonly problem?: string;
}

/**
 * What a delivery whose id is already known gets instead of being typed again:
 * - `replay`: it ended; its recorded answer.
 * - `in_flight`: another process is delivering it now.
 * - `cut_off`: it started and its process is gone, or it failed mid-way: it may have been typed.
 */
export interface KnownDelivery {
  readonly kind: 'replay' | 'in_flight' | 'cut_off';
  readonly record: DeliveryRecord;
}

/** The answer for an id already recorded; `alive` says whether a process runs. */
export function judgeKnownDelivery(record: DeliveryRecord, alive: (pid: number) => boolean): KnownDelivery {
  if (record.state === 'ended' && record.document !== undefined) return { kind: 'replay', record };
  if (record.state === 'started' && alive(record.pid)) return { kind: 'in_flight', record };
  return { kind: 'cut_off', record };
}

/** Which of `entries` (name and last change) to drop: older than the age, or beyond the newest `keep`. */
export function expiredDeliveries(entries: readonly { readonly name: string; readonly changedAtMs: number }[], nowMs: number, options: { readonly maxAgeMs: number; readonly keep: number }): string[] {
  const newestFirst = [...entries].sort((a, b) => b.changedAtMs - a.changedAtMs);
  return newestFirst.filter((entry, index) => index >= options.keep || nowMs - entry.changedAtMs > options.maxAgeMs).map((entry) => entry.name);
}

/** What a delivery id is claimed for: the pane as the caller named it, and the text. */
export interface DeliveryRequest {
  readonly pane: string;
  readonly text: string;
}

function textDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Why a known record is not the delivery `request` asks for again, or undefined when it is: a
 * delivery id names one delivery, so its resend must name the same pane and the same text.
 */
export function deliveryMismatch(record: DeliveryRecord, request: DeliveryRequest): string | undefined {
  const otherPane = record.pane !== request.pane;
  const otherText = record.text_sha256 !== undefined && record.text_sha256 !== textDigest(request.text);
  if (!otherPane && !otherText) return undefined;
  const what = otherPane && otherText ? `pane ${record.pane} and other text` : otherPane ? `pane ${record.pane}` : 'other text';
  return `delivery id ${record.delivery_id} was used at ${record.started_at} for ${what}; an id names one delivery, so a resend repeats its pane and text: pick a new id for a new delivery`;
}

/** A claimed delivery: the caller types, then records how it ended (or gives the claim back). */
export interface DeliveryClaim {
  readonly kind: 'claimed';
  /** Records the delivery's answer; a resend with this id gets it back. */
  ended(document: Record<string, unknown>, exitStatus: number): void;
  /** Records that it failed after typing may have begun: a resend is told so, never typed. */
  interrupted(problem: string): void;
  /** Forgets the id: nothing was typed, so a resend may deliver. */
  release(): void;
}

const RECORD_SUFFIX = '.json';

function recordText(record: DeliveryRecord): string {
  return `${JSON.stringify(record)}\n`;
}
/** How often a delivery in flight in another process is looked at again. */
const SETTLE_POLL_MS = 100;

export class DeliveryLedger {
  constructor(readonly directory: string) {}

  private path(id: string): string {
    return join(this.directory, `${id}${RECORD_SUFFIX}`);
  }

  /** The record of `id`, or undefined when none is kept. */
  read(id: string): DeliveryRecord | undefined {
    let text: string;
    try {
      text = readFileSync(this.path(id), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return JSON.parse(text) as DeliveryRecord;
  }

  /**
   * Claims `id` for delivering `request` by this process, or says what is already known of it.
   * ArgumentError for an id that is not one, or one already used for another pane or text.
   */
  claim(id: string, request: DeliveryRequest): DeliveryClaim | KnownDelivery {
    const problem = deliveryIdProblem(id);
    if (problem !== undefined) throw new ArgumentError(problem);
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    this.prune();
    const started: DeliveryRecord = {
      delivery_id: id,
      state: 'started',
      pane: request.pane,
      text_sha256: textDigest(request.text),
      pid: process.pid,
      started_at: formatTimestamp(wallMicros()),
    };
    const written = writeFileBeside(this.path(id), recordText(started));
    try {
      linkSync(written, this.path(id));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const known = this.read(id);
      // Dropped by another process's pruning between the two calls: claim it again.
      if (known === undefined) return this.claim(id, request);
      const mismatch = deliveryMismatch(known, request);
      if (mismatch !== undefined) throw new ArgumentError(mismatch);
      return judgeKnownDelivery(known, isProcessAlive);
    } finally {
      rmSync(written, { force: true });
    }
    const finish = (record: DeliveryRecord): void => writeFileAtomic(this.path(id), recordText(record));
    return {
      kind: 'claimed',
      ended: (document, exitStatus) => finish({ ...started, state: 'ended', ended_at: formatTimestamp(wallMicros()), exit_status: exitStatus, document }),
      interrupted: (why) => finish({ ...started, state: 'interrupted', ended_at: formatTimestamp(wallMicros()), problem: why }),
      release: () => rmSync(this.path(id), { force: true }),
    };
  }

  /**
   * What is known of `id` once it is no longer in flight, waiting for the process delivering it
   * at most `timeoutMs`; at the deadline, still in flight.
   */
  async settled(id: string, options: { readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<KnownDelivery | undefined> {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const record = this.read(id);
      const known = record === undefined ? undefined : judgeKnownDelivery(record, isProcessAlive);
      if (known?.kind !== 'in_flight' || Date.now() >= deadline || options.signal?.aborted) return known;
      await delay(SETTLE_POLL_MS, undefined, { signal: options.signal }).catch(() => undefined);
    }
  }

  private prune(): void {
    const entries: { name: string; changedAtMs: number }[] = [];
    for (const name of readdirSync(this.directory)) {
      if (!name.endsWith(RECORD_SUFFIX) || name.startsWith('.')) continue;
      try {
        entries.push({ name, changedAtMs: statSync(join(this.directory, name)).mtimeMs });
      } catch {
        // removed meanwhile
      }
    }
    // keep − 1: room for the record about to be claimed.
    for (const name of expiredDeliveries(entries, Date.now(), { maxAgeMs: DELIVERY_RETENTION_MS, keep: DELIVERY_RETENTION_COUNT - 1 })) {
      rmSync(join(this.directory, name), { force: true });
    }
  }
}
