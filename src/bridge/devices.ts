/**
 * Pairing and devices. `drover web pair` writes a one-time code (only its hash) valid for ten
 * minutes; a browser trades it for a device token, of which only the hash is kept. Five wrong
 * codes burn the code. The files live in drover's state directory and are re-read whenever
 * they change, so a `drover web revoke` from another process takes effect on the next request.
 */
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BridgeError } from './errors.js';

export const PAIRING_CODE_TTL_MS = 10 * 60_000;
export const PAIRING_MAX_FAILURES = 5;
/** No 0/O, 1/I/L: a code is read off one screen and typed on another. */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;
const MAX_DEVICE_NAME = 64;

export interface Device {
  readonly deviceId: string;
  readonly name: string;
  readonly pairedAt: string;
  readonly revokedAt: string | null;
}

interface DeviceRecord {
  device_id: string;
  name: string;
  token_sha256: string;
  paired_at: string;
  revoked_at: string | null;
}

interface PairingRecord {
  code_sha256: string;
  created_at: string;
  expires_at: string;
  failures: number;
}

export interface PairingCode {
  /** As shown to a person: ABCD-EFGH. */
  readonly code: string;
  readonly expiresAt: string;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** A code as typed (any case, with or without the dash or spaces) in its canonical form. */
export function normalisePairingCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, '');
}

function deviceName(name: unknown): string {
  const cleaned = typeof name === 'string' ? name.replace(/\p{Cc}/gu, '').trim().slice(0, MAX_DEVICE_NAME) : '';
  return cleaned === '' ? 'browser' : cleaned;
}

function toDevice(record: DeviceRecord): Device {
  return { deviceId: record.device_id, name: record.name, pairedAt: record.paired_at, revokedAt: record.revoked_at };
}

export class DeviceRegistry {
  private readonly devicesFile: string;
  private readonly pairingFile: string;
  private cached: { stamp: string; records: DeviceRecord[] } | undefined;

  constructor(
    readonly directory: string,
    private readonly now: () => number = Date.now,
  ) {
    this.devicesFile = join(directory, 'devices.json');
    this.pairingFile = join(directory, 'pairing.json');
  }

  /** A fresh one-time code, replacing any earlier one. */
  createPairingCode(): PairingCode {
    const code = Array.from({ length: CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
    const now = this.now();
    const record: PairingRecord = {
      code_sha256: sha256(code),
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + PAIRING_CODE_TTL_MS).toISOString(),
      failures: 0,
    };
    this.write(this.pairingFile, record);
    return { code: `${code.slice(0, 4)}-${code.slice(4)}`, expiresAt: record.expires_at };
  }

  /** Trades a pairing code for a device token; every refusal says why, and wrong codes count towards the lockout. */
  redeem(typedCode: string, name?: unknown): { device: Device; token: string } {
    const pairing = this.readJson<PairingRecord>(this.pairingFile);
    if (pairing === undefined) throw new BridgeError('no_pairing_code', 'no pairing code is waiting; run `drover web pair` on the machine drover runs on');
    if (pairing.failures >= PAIRING_MAX_FAILURES) {
      throw new BridgeError('pairing_locked', `this pairing code took ${PAIRING_MAX_FAILURES} wrong tries and no longer works; run \`drover web pair\` for a new one`);
    }
    if (this.now() >= Date.parse(pairing.expires_at)) {
      rmSync(this.pairingFile, { force: true });
      throw new BridgeError('pairing_expired', 'the pairing code has expired (codes last 10 minutes); run `drover web pair` for a new one');
    }
    if (!sameHash(sha256(normalisePairingCode(String(typedCode))), pairing.code_sha256)) {
      const failures = pairing.failures + 1;
      this.write(this.pairingFile, { ...pairing, failures });
      if (failures >= PAIRING_MAX_FAILURES) {
        throw new BridgeError('pairing_locked', `wrong pairing code; that was the ${PAIRING_MAX_FAILURES}th wrong try, so the code no longer works; run \`drover web pair\` for a new one`);
      }
      throw new BridgeError('pairing_invalid', `wrong pairing code (${PAIRING_MAX_FAILURES - failures} tries left)`, { details: { tries_left: PAIRING_MAX_FAILURES - failures } });
    }
    rmSync(this.pairingFile, { force: true });
    const token = `dw_${randomBytes(32).toString('base64url')}`;
    const record: DeviceRecord = {
      device_id: randomBytes(4).toString('hex'),
      name: deviceName(name),
      token_sha256: sha256(token),
      paired_at: new Date(this.now()).toISOString(),
      revoked_at: null,
    };
    this.write(this.devicesFile, { devices: [...this.records(), record] });
    return { device: toDevice(record), token };
  }

  /** The paired, unrevoked device a token belongs to. */
  authenticate(token: string | undefined): Device | undefined {
    if (token === undefined || token === '') return undefined;
    const hash = sha256(token);
    const record = this.records().find((candidate) => sameHash(candidate.token_sha256, hash));
    return record === undefined || record.revoked_at !== null ? undefined : toDevice(record);
  }

  list(): Device[] {
    return this.records().map(toDevice);
  }

  /** Revokes a device by id (idempotent); an unknown id is an error naming it. */
  revoke(deviceId: string): Device {
    const records = this.records();
    const record = records.find((candidate) => candidate.device_id === deviceId);
    if (record === undefined) throw new BridgeError('not_found', `no paired device has the id ${JSON.stringify(deviceId)}; \`drover web devices\` lists them`);
    if (record.revoked_at === null) {
      record.revoked_at = new Date(this.now()).toISOString();
      this.write(this.devicesFile, { devices: records });
    }
    return toDevice(record);
  }

  /** Whether a browser can pair or has paired: a live code, or a device not revoked. */
  hasPairing(): boolean {
    if (this.records().some((record) => record.revoked_at === null)) return true;
    const pairing = this.readJson<PairingRecord>(this.pairingFile);
    return pairing !== undefined && pairing.failures < PAIRING_MAX_FAILURES && this.now() < Date.parse(pairing.expires_at);
  }

  private records(): DeviceRecord[] {
    let stamp: string;
    try {
      const stat = statSync(this.devicesFile);
      stamp = `${stat.mtimeMs} ${stat.size} ${stat.ino}`;
    } catch {
      return [];
    }
    if (this.cached?.stamp !== stamp) {
      const parsed = this.readJson<{ devices?: DeviceRecord[] }>(this.devicesFile);
      this.cached = { stamp, records: Array.isArray(parsed?.devices) ? parsed.devices : [] };
    }
    return this.cached.records.map((record) => ({ ...record }));
  }

  private readJson<T>(file: string): T | undefined {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as T;
    } catch {
      return undefined;
    }
  }

  /** Whole-file replacement through a rename, so a reader never sees half a file. */
  private write(file: string, value: unknown): void {
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  }
}
