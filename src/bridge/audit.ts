/**
 * The append-only record of every write `drover web` was asked for, allowed or not: one JSON
 * line per request, opened for appending only and owner-readable only. Reply text is recorded by
 * its length and hash, not verbatim: the log says what was done, it does not keep what was said.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export interface AuditEntry {
  readonly device: string | null;
  readonly remote: string | null;
  readonly action: string;
  readonly target: string | null;
  /** The HTTP status answered. */
  readonly status: number;
  readonly code: string | null;
  readonly detail?: Readonly<Record<string, unknown>>;
}

export function textFingerprint(text: string): { chars: number; sha256: string } {
  return { chars: Array.from(text).length, sha256: createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16) };
}

export class AuditLog {
  constructor(
    readonly path: string,
    private readonly now: () => number = Date.now,
  ) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  }

  append(entry: AuditEntry): void {
    appendFileSync(this.path, `${JSON.stringify({ time: new Date(this.now()).toISOString(), ...entry })}\n`, { flag: 'a', mode: 0o600 });
  }
}
