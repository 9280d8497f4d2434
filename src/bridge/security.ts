/**
 * The pure checks every request passes before it reaches the multiplexer: which Host names the
 * server answers to (DNS rebinding), which Origin may write or listen, the response headers that
 * keep the page from being framed, sniffed or leaking its address, and the write rate limit.
 */
import { isIP } from 'node:net';

/** Addresses that only this machine can reach. */
export function isLoopbackAddress(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/** The wildcard addresses, which listen on every interface. */
export function isWildcardAddress(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare === '0.0.0.0' || bare === '::' || bare === '';
}

/** `host` and `port` of a Host header (or an Origin's authority); undefined when it is malformed. */
export function splitAuthority(authority: string): { host: string; port: number | null } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(authority.trim());
  if (match === null) return undefined;
  return { host: match[1]!.toLowerCase(), port: match[2] === undefined ? null : Number(match[2]) };
}

/**
 * The Host names a request may carry: loopback names, the address the server is bound to, and
 * the names the operator allowed (`--allow-host`, e.g. a tailnet name behind `tailscale serve`).
 * Any port: a tunnel (`ssh -L 8080:127.0.0.1:7717`) or a proxy changes it, and rebinding is an
 * attack through a name, not a port.
 */
export class HostAllowlist {
  private readonly names = new Set<string>();

  constructor(bound: readonly string[], allowed: readonly string[]) {
    for (const name of ['localhost', '127.0.0.1', '[::1]', ...bound, ...allowed]) this.names.add(normaliseHost(name));
  }

  allows(hostHeader: string | undefined): boolean {
    if (hostHeader === undefined) return false;
    const authority = splitAuthority(hostHeader);
    return authority !== undefined && this.names.has(authority.host);
  }
}

function normaliseHost(name: string): string {
  const lower = name.trim().toLowerCase();
  return isIP(lower) === 6 ? `[${lower}]` : lower;
}

/**
 * Whether a request's Origin is this page's own. A browser sends Origin on every write and on
 * a cross-origin stream; a same-origin GET may come without it, and then Sec-Fetch-Site (sent by
 * every current browser) must not say another site asked. Writes must carry Origin.
 */
export function originVerdict(
  headers: { origin?: string; host?: string; secFetchSite?: string },
  requireOrigin: boolean,
): { ok: true } | { ok: false; reason: string } {
  const { origin, host } = headers;
  if (origin === undefined || origin === '') {
    if (requireOrigin) return { ok: false, reason: 'a write must carry an Origin header naming this page' };
    if (headers.secFetchSite !== undefined && !['same-origin', 'none'].includes(headers.secFetchSite)) {
      return { ok: false, reason: `the browser says this request came from a ${headers.secFetchSite} page` };
    }
    return { ok: true };
  }
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return { ok: false, reason: `the Origin ${JSON.stringify(origin)} is not a URL` };
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || host === undefined) {
    return { ok: false, reason: `the Origin ${origin} is not this page` };
  }
  const ours = splitAuthority(host);
  const theirs = splitAuthority(parsed.host);
  const defaultPort = parsed.protocol === 'https:' ? 443 : 80;
  const same = ours !== undefined && theirs !== undefined && ours.host === theirs.host && (ours.port ?? defaultPort) === (theirs.port ?? defaultPort);
  return same ? { ok: true } : { ok: false, reason: `the Origin ${origin} is not this page (${host})` };
}

/** Script and style only from the page's own files; nothing framed, posted elsewhere or fetched from elsewhere. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
});

export interface RateLimit {
  /** Writes allowed at once. */
  readonly burst: number;
  /** Writes regained per second. */
  readonly perSecond: number;
}

export const DEFAULT_WRITE_RATE: RateLimit = Object.freeze({ burst: 30, perSecond: 5 });

/** A token bucket per key (a device): writes beyond the burst wait for the refill. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
  ) {
    if (!(limit.burst >= 1) || !(limit.perSecond > 0)) throw new RangeError('a rate limit needs a burst of at least 1 and a positive refill rate');
  }

  /** Takes one write; the seconds to wait when none is left. */
  take(key: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.limit.burst, at: now };
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limit.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.limit.perSecond)) };
  }
}
