/**
 * The one chain every request passes before its route, in this order:
 *
 * 1. Host allowlist: a Host name the server does not know is refused (DNS rebinding).
 * 2. Audit: writes and pairing are appended to the audit log, allowed or refused by any later step.
 * 3. Origin: writes, "look now" and the event stream only from this page's own Origin.
 * 4. Device: a paired, unrevoked device token, except on open routes (the page's files, pairing).
 * 5. Read-only: every write refused under --read-only.
 * 6. Rate limit: writes per device.
 *
 * Each step is a plain function of the call and the rest of the chain.
 */
import type { AuditLog } from './audit.js';
import type { DeviceRegistry } from './devices.js';
import { BridgeError } from './errors.js';
import { DEVICE_COOKIE } from './protocol.js';
import { errorBody, type ApiRequest, type Middleware } from './routing.js';
import { originVerdict, type HostAllowlist, type RateLimiter } from './security.js';

export function cookies(request: ApiRequest): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) jar.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return jar;
}

/** The device token: a bearer token (scripts) or the device cookie (the page). */
export function deviceToken(request: ApiRequest): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  return bearer ?? cookies(request).get(DEVICE_COOKIE);
}

export function hostAllowlist(allowlist: HostAllowlist): Middleware {
  return (call, next) => {
    const host = call.request.headers.host;
    if (!allowlist.allows(host)) {
      throw new BridgeError('forbidden_host', `drover web does not answer to the host ${JSON.stringify(host ?? '')}; start it with --allow-host NAME to allow a name`);
    }
    return next();
  };
}

/** Records each audited call with the status it got; a failure to record is logged, never answered. */
export function audit(log: AuditLog, report: (line: string) => void): Middleware {
  return async (call, next) => {
    if (!(call.route.write || call.route.audited)) return next();
    const record = (status: number, code: string | null): void => {
      const origin = call.request.headers.origin;
      try {
        log.append({
          device: call.device?.deviceId ?? null,
          remote: call.request.remote,
          action: call.route.action,
          target: call.audit.target,
          status,
          code,
          detail: { ...call.audit.detail, ...(code === 'forbidden_origin' && origin !== undefined ? { origin } : {}) },
        });
      } catch (error) {
        report(`cannot append to the audit log ${log.path}: ${(error as Error).message}`);
      }
    };
    try {
      const response = await next();
      record(response.status, null);
      return response;
    } catch (error) {
      const { status, body } = errorBody(error);
      record(status, body.error.code);
      throw error;
    }
  };
}

export const sameOrigin: Middleware = (call, next) => {
  const { request } = call;
  if (request.method !== 'GET' || call.route.stream) {
    const verdict = originVerdict({ origin: request.headers.origin, host: request.headers.host, secFetchSite: request.headers['sec-fetch-site'] }, request.method !== 'GET');
    if (!verdict.ok) throw new BridgeError('forbidden_origin', verdict.reason);
  }
  return next();
};

export function pairedDevice(devices: DeviceRegistry): Middleware {
  return (call, next) => {
    if (call.route.open) return next();
    const device = devices.authenticate(deviceToken(call.request));
    if (device === undefined) throw new BridgeError('unauthorized', 'this browser is not paired with drover web (or its pairing was revoked); run `drover web pair` and enter the code');
    call.device = device;
    return next();
  };
}

export function readOnly(enabled: boolean): Middleware {
  return (call, next) => {
    if (enabled && call.route.write) throw new BridgeError('read_only', 'drover web runs with --read-only: it changes nothing');
    return next();
  };
}

export function rateLimit(limiter: RateLimiter): Middleware {
  return (call, next) => {
    if (!call.route.write) return next();
    const taken = limiter.take(call.device?.deviceId ?? call.request.remote ?? '');
    if (!taken.ok) {
      throw new BridgeError('rate_limited', `too many writes; try again in ${taken.retryAfterSeconds} s`, {
        details: { retry_after_seconds: taken.retryAfterSeconds },
        headers: { 'Retry-After': String(taken.retryAfterSeconds) },
      });
    }
    return next();
  };
}
