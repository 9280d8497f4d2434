/**
 * `drover web`: the HTTP API, the event stream and the page, over one mux port, with node:http.
 *
 * Every request passes, in order: the Host allowlist; the route; the Origin check (writes and
 * the stream); the device token (everything but the page's own files and pairing); for writes,
 * read-only mode and the rate limit. Every write is appended to the audit log, allowed or not.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { FleetRuntime } from '../fleet/index.js';
import type { MuxPort } from '../mux/index.js';
import { sendKeysInTurn, unwrap } from './agent-input.js';
import { AuditLog, textFingerprint } from './audit.js';
import { DeviceRegistry, type Device } from './devices.js';
import { BridgeError } from './errors.js';
import { EventHub, formatEvent, type StreamEvent } from './events.js';
import { FleetApi } from './fleet.js';
import { bearer, cookies, errorBody, integerField, readJsonBody, sendJson, stringField } from './http.js';
import { PaneObserver, type AgentCensus } from './observer.js';
import { DEVICE_COOKIE, KEY_TRAY, type ConfigView, type GridView, type KeyTrayEntry } from './protocol.js';
import { checkReplyText, replyToPane } from './reply.js';
import { DEFAULT_WRITE_RATE, HostAllowlist, isLoopbackAddress, isWildcardAddress, originVerdict, RateLimiter, SECURITY_HEADERS, type RateLimit } from './security.js';

export const DEFAULT_WEB_PORT = 7717;
const MAX_KEYS = 64;
const MAX_GRID_LINES = 10_000;
/** A stream that falls this far behind is dropped; the browser reconnects and resumes from its last id. */
const MAX_STREAM_BACKLOG_BYTES = 1024 * 1024;
const DEFAULT_HEARTBEAT_MS = 15_000;
const DEVICE_COOKIE_MAX_AGE_S = 400 * 24 * 3600;

export interface BridgeOptions {
  readonly mux: MuxPort;
  /** Where pairing, devices and the audit log live. */
  readonly stateDirectory: string;
  /** Address to listen on; 127.0.0.1 by default. */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly readOnly?: boolean;
  /** Host names the server also answers to, on any port (a tailnet name behind `tailscale serve`). */
  readonly allowHosts?: readonly string[];
  /** The directory holding the bundled page (page.js, page.css). */
  readonly assets?: string;
  readonly fleet?: FleetRuntime;
  /** Why there is no fleet, shown on the page. */
  readonly fleetUnavailable?: string;
  readonly census?: AgentCensus;
  readonly writeRate?: RateLimit;
  /** How often an open stream is pinged and its device checked again (a revoked device loses it then). */
  readonly heartbeatMs?: number;
  readonly version?: string;
  readonly log?: (line: string) => void;
}

export interface Bridge {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly devices: DeviceRegistry;
  readonly hub: EventHub;
  readonly observer: PaneObserver;
  readonly auditPath: string;
  close(): Promise<void>;
}

interface RequestContext {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly url: URL;
  readonly params: readonly string[];
  readonly device: Device | null;
  /** What the audit log records about this write beyond its route. */
  audit: Record<string, unknown>;
  target: string | null;
}

type Handler = (context: RequestContext) => Promise<unknown>;

interface Route {
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  readonly action: string;
  /** Changes something in a pane, the layout or the fleet: audited, rate-limited, refused when read-only. */
  readonly write?: boolean;
  /** Answered without a device token. */
  readonly open?: boolean;
  readonly handler: Handler;
}

const SEGMENT = '([^/]+)';

function pageShell(built: boolean): string {
  const body = built
    ? '<div id="app"><p>Loading drover…</p></div>'
    : '<main><h1>drover web</h1><p>The page was not built. Run <code>npm run build</code> in drover’s checkout and start <code>drover web</code> again.</p></main>';
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="color-scheme" content="dark light">',
    '<title>drover</title>',
    '<link rel="stylesheet" href="/assets/page.css">',
    built ? '<script type="module" src="/assets/page.js"></script>' : '',
    '</head>',
    `<body>${body}</body>`,
    '</html>',
  ].join('\n');
}

function readAsset(directory: string | undefined, name: string): Buffer | undefined {
  if (directory === undefined) return undefined;
  try {
    return readFileSync(join(directory, name));
  } catch {
    return undefined;
  }
}

/** The addresses a wildcard bind listens on, as Host names. */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .map((entry) => entry.address);
}

function urlHost(host: string): string {
  if (isWildcardAddress(host)) return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Runs one write to a pane while whatever else types into it (a fleet delivery) is held off. */
type PaneInputGuard = <T>(paneId: string, write: () => Promise<T>) => Promise<T>;

/**
 * A serialised section per pane: two writes to one pane never interleave their keystrokes,
 * within this server (the queue) or with other drover processes (the input guard).
 */
class PaneQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly guard: PaneInputGuard) {}

  run<T>(paneId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(paneId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.guard(paneId, task));
    const tail = next.catch(() => undefined);
    this.tails.set(paneId, tail);
    void tail.then(() => {
      if (this.tails.get(paneId) === tail) this.tails.delete(paneId);
    });
    return next;
  }
}

export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const host = options.host ?? '127.0.0.1';
  const mux = options.mux;
  const log = options.log ?? (() => undefined);
  const devices = new DeviceRegistry(options.stateDirectory);
  if (!isLoopbackAddress(host) && !devices.hasPairing()) {
    throw new BridgeError(
      'pairing_required',
      `drover web listens on ${host} (other machines can reach it) only once pairing is set up: run \`drover web pair\` first, then open the address it prints on the device`,
    );
  }
  const audit = new AuditLog(join(options.stateDirectory, 'audit.log'));
  const hub = new EventHub();
  const observer = new PaneObserver(mux, hub, { census: options.census, log });
  const fleet = options.fleet === undefined ? undefined : new FleetApi(options.fleet, hub);
  const limiter = new RateLimiter(options.writeRate ?? DEFAULT_WRITE_RATE);
  const panes = new PaneQueue(fleet === undefined ? (_paneId, write) => write() : (paneId, write) => fleet.withPaneInput(mux.mux, paneId, write));
  const readOnly = options.readOnly === true;
  const assets = { js: readAsset(options.assets, 'page.js'), css: readAsset(options.assets, 'page.css') };
  const shell = pageShell(assets.js !== undefined);
  const streams = new Set<ServerResponse>();

  await observer.start();
  fleet?.watch();

  const keyTray: KeyTrayEntry[] = KEY_TRAY.map(({ label, key }) => ({
    label,
    key,
    refused: mux.keyProblem(key) ?? null,
  }));
  const config = (): ConfigView => ({
    version: options.version ?? '',
    mux: mux.mux,
    read_only: readOnly,
    supports: mux.declaration.supports,
    unsupported_keys: mux.declaration.unsupportedKeys,
    notes: mux.declaration.notes,
    topology_latency: mux.declaration.topologyLatency,
    spaces: mux.declaration.spaces,
    keys_tray: keyTray,
    fleet: { available: fleet !== undefined, reason: fleet === undefined ? (options.fleetUnavailable ?? 'no fleet database') : null },
  });

  const requireFleet = (): FleetApi => {
    if (fleet === undefined) throw new BridgeError('fleet_unavailable', options.fleetUnavailable ?? 'drover web was started without a fleet database');
    return fleet;
  };
  const fleetId = (text: string): number => {
    if (!/^[1-9][0-9]{0,15}$/.test(text)) throw new BridgeError('bad_request', `fleet id ${JSON.stringify(text)} is not a positive whole number`);
    return Number(text);
  };
  const paneOf = async (context: RequestContext): Promise<string> => {
    const paneId = context.params[0]!;
    context.target = paneId;
    await observer.find(paneId);
    return paneId;
  };

  const routes: Route[] = [
    {
      method: 'POST',
      pattern: /^\/api\/pair$/,
      action: 'pair',
      open: true,
      handler: async (context) => {
        const body = await readJsonBody(context.request);
        const code = stringField(body, 'code')!;
        const { device, token } = devices.redeem(code, body.name);
        context.audit = { paired: device.deviceId };
        context.response.setHeader('Set-Cookie', `${DEVICE_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${DEVICE_COOKIE_MAX_AGE_S}`);
        return { device: { device_id: device.deviceId, name: device.name, paired_at: device.pairedAt } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/session$/,
      action: 'session',
      handler: async (context) => ({ device: { device_id: context.device!.deviceId, name: context.device!.name, paired_at: context.device!.pairedAt } }),
    },
    { method: 'GET', pattern: /^\/api\/config$/, action: 'config', handler: async () => config() },
    { method: 'GET', pattern: /^\/api\/snapshot$/, action: 'snapshot', handler: async () => observer.snapshot() },
    {
      method: 'POST',
      pattern: /^\/api\/refresh$/,
      action: 'refresh',
      handler: async () => {
        await observer.lookNow();
        return { refreshed: true };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/api/panes/${SEGMENT}/grid$`),
      action: 'grid',
      handler: async (context) => {
        const paneId = await paneOf(context);
        const linesParam = context.url.searchParams.get('lines');
        let lines: number | null = null;
        if (linesParam !== null) {
          lines = Number(linesParam);
          if (!Number.isInteger(lines) || lines < 1 || lines > MAX_GRID_LINES) throw new BridgeError('bad_request', `lines must be a whole number from 1 to ${MAX_GRID_LINES}`);
        }
        const grid = unwrap(
          await mux.readGrid(paneId, lines === null ? { scope: 'viewport', styling: 'preserve' } : { scope: 'recent', lines, styling: 'preserve' }),
        );
        observer.markSeen(paneId);
        const etag = `"${grid.revision}${lines === null ? '' : `.${lines}`}"`;
        if (context.request.headers['if-none-match'] === etag) {
          context.response.writeHead(304, { ETag: etag, 'Cache-Control': 'no-cache' });
          context.response.end();
          return undefined;
        }
        const view: GridView = { pane_id: paneId, text: grid.text, revision: grid.revision, truncated: grid.truncated, scope: lines === null ? 'viewport' : 'recent', lines };
        sendJson(context.response, 200, view, { ETag: etag, 'Cache-Control': 'no-cache' });
        return undefined;
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/panes/${SEGMENT}/reply$`),
      action: 'reply',
      write: true,
      handler: async (context) => {
        const paneId = await paneOf(context);
        const body = await readJsonBody(context.request);
        const text = checkReplyText(body.text, mux);
        const expected = stringField(body, 'question', { optional: true, nullable: true });
        context.audit = { ...textFingerprint(text), question: expected ?? null };
        return panes.run(paneId, async () => {
          if (expected !== undefined && expected !== null) await requireQuestion(paneId, expected);
          const pane = observer.pane(paneId);
          const receipt = await replyToPane(mux, paneId, text, { agent: observer.agentOf(pane), rules: observer.rulesOf(pane) });
          context.audit = { ...context.audit, receipt: receipt.status };
          void observer.inspect(paneId);
          return receipt;
        });
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/panes/${SEGMENT}/answer$`),
      action: 'answer',
      write: true,
      handler: async (context) => {
        const paneId = await paneOf(context);
        const body = await readJsonBody(context.request);
        const questionId = stringField(body, 'question')!;
        const option = integerField(body, 'option');
        context.audit = { question: questionId, option };
        return panes.run(paneId, async () => {
          const question = await requireQuestion(paneId, questionId);
          const chosen = question.options[option];
          if (chosen === undefined) throw new BridgeError('bad_request', `the question offers ${question.options.length} answers; there is no answer ${option}`);
          await sendKeysInTurn(mux, paneId, chosen.keys);
          context.audit = { ...context.audit, keys: chosen.keys };
          void observer.inspect(paneId);
          return { answered: question.id, keys: chosen.keys };
        });
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/panes/${SEGMENT}/keys$`),
      action: 'keys',
      write: true,
      handler: async (context) => {
        const paneId = await paneOf(context);
        const body = await readJsonBody(context.request);
        const keys = body.keys;
        if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS || !keys.every((key) => typeof key === 'string')) {
          throw new BridgeError('bad_request', `"keys" must be a list of 1 to ${MAX_KEYS} key names (Escape, ctrl+c, Up, y…)`);
        }
        context.audit = { keys };
        const refused = keys.flatMap((key: string) => {
          const problem = mux.keyProblem(key);
          return problem === undefined ? [] : [{ key, reason: problem }];
        });
        if (refused.length > 0) {
          throw new BridgeError('key_refused', `refused ${refused.map((entry) => JSON.stringify(entry.key)).join(', ')}; nothing was sent`, { details: { refused } });
        }
        return panes.run(paneId, async () => {
          unwrap(await mux.sendKeys(paneId, keys as string[]));
          void observer.inspect(paneId);
          return { sent: keys };
        });
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/panes/${SEGMENT}/rename$`),
      action: 'rename',
      write: true,
      handler: async (context) => {
        const paneId = await paneOf(context);
        const label = stringField(await readJsonBody(context.request), 'label', { nullable: true }) as string | null;
        context.audit = { label };
        unwrap(await mux.renamePane(paneId, label === null || label.trim() === '' ? null : label));
        return { renamed: paneId, label };
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/panes/${SEGMENT}/close$`),
      action: 'close',
      write: true,
      handler: async (context) => {
        const paneId = await paneOf(context);
        await readJsonBody(context.request);
        unwrap(await mux.closePane(paneId));
        return { closed: paneId };
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/panes/${SEGMENT}/focus$`),
      action: 'focus',
      write: true,
      handler: async (context) => {
        const paneId = await paneOf(context);
        await readJsonBody(context.request);
        unwrap(await mux.setFocus(paneId));
        return { focused: paneId };
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/tabs$/,
      action: 'new-tab',
      write: true,
      handler: async (context) => {
        const body = await readJsonBody(context.request);
        const spaceId = stringField(body, 'space_id')!;
        context.target = spaceId;
        const created = unwrap(
          await mux.createTab({ spaceId, label: stringField(body, 'label', { optional: true }) ?? undefined, cwd: stringField(body, 'cwd', { optional: true }) ?? undefined }),
        );
        return { pane_id: created.paneId, tab_id: created.tabId, space_id: created.spaceId };
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/spaces$/,
      action: 'new-space',
      write: true,
      handler: async (context) => {
        const body = await readJsonBody(context.request);
        const created = unwrap(
          await mux.createSpace({ label: stringField(body, 'label', { optional: true }) ?? undefined, cwd: stringField(body, 'cwd', { optional: true }) ?? undefined }),
        );
        return { pane_id: created.paneId, tab_id: created.tabId, space_id: created.spaceId };
      },
    },
    { method: 'GET', pattern: /^\/api\/events$/, action: 'events', handler: async (context) => stream(context) },
    { method: 'GET', pattern: /^\/api\/fleet$/, action: 'fleet', handler: async () => (fleet === undefined ? { available: false, reason: config().fleet.reason, fleets: [] } : fleet.list()) },
    {
      method: 'GET',
      pattern: new RegExp(`^/api/fleet/${SEGMENT}/inbox$`),
      action: 'inbox',
      handler: async (context) => requireFleet().inbox(fleetId(context.params[0]!)),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/fleet/${SEGMENT}/messages$`),
      action: 'fleet-send',
      write: true,
      handler: async (context) => {
        const api = requireFleet();
        const id = fleetId(context.params[0]!);
        const body = await readJsonBody(context.request);
        const to = integerField(body, 'to');
        const text = stringField(body, 'text')!;
        context.target = `fleet ${id} member ${to}`;
        context.audit = textFingerprint(text);
        return api.send(id, to, text);
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/fleet/${SEGMENT}/ack$`),
      action: 'fleet-ack',
      write: true,
      handler: async (context) => {
        const api = requireFleet();
        const id = fleetId(context.params[0]!);
        const messageId = integerField(await readJsonBody(context.request), 'message_id');
        context.target = `fleet ${id} message ${messageId}`;
        return api.ack(id, messageId);
      },
    },
  ];

  /** The pane's question now, read afresh, must be the one the answer was meant for. */
  async function requireQuestion(paneId: string, questionId: string) {
    const current = await observer.currentQuestion(paneId);
    if (current === null || current.id !== questionId) {
      throw new BridgeError(
        'question_changed',
        current === null ? 'the pane no longer asks that question; nothing was sent' : `the pane now asks something else (${current.snippet}); nothing was sent`,
        { details: { current } },
      );
    }
    return current;
  }

  function stream(context: RequestContext): Promise<undefined> {
    const { request, response } = context;
    response.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    response.write('retry: 2000\n\n');
    const token = deviceToken(request);
    const send = (event: StreamEvent): void => {
      if (response.writableLength > MAX_STREAM_BACKLOG_BYTES) response.destroy();
      else response.write(formatEvent(event));
    };
    const lastEventId = request.headers['last-event-id'];
    if (typeof lastEventId === 'string' && lastEventId !== '') {
      const missed = hub.since(lastEventId);
      if (missed === undefined) send({ id: hub.lastId(), kind: 'resync', data: {} });
      else for (const event of missed) send(event);
    }
    const unsubscribe = hub.subscribe(send);
    // A revoked device loses its stream within one heartbeat.
    const heartbeat = setInterval(() => {
      if (devices.authenticate(token) === undefined) response.end();
      else response.write(': ping\n\n');
    }, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    streams.add(response);
    return new Promise((resolve) => {
      response.on('close', () => {
        clearInterval(heartbeat);
        unsubscribe();
        streams.delete(response);
        resolve(undefined);
      });
    });
  }

  function deviceToken(request: IncomingMessage): string | undefined {
    return bearer(request) ?? cookies(request).get(DEVICE_COOKIE);
  }

  const allowlist = new HostAllowlist(isWildcardAddress(host) ? interfaceAddresses() : [host], options.allowHosts ?? []);

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'http://drover.invalid');
    const remote = request.socket.remoteAddress ?? null;
    let context: RequestContext | undefined;
    let route: Route | undefined;
    try {
      if (!allowlist.allows(request.headers.host)) {
        throw new BridgeError('forbidden_host', `drover web does not answer to the host ${JSON.stringify(request.headers.host ?? '')}; start it with --allow-host NAME to allow a name`);
      }
      if (method === 'GET' && !url.pathname.startsWith('/api/')) {
        serveFile(url.pathname, response);
        return;
      }
      const matching = routes.filter((candidate) => candidate.pattern.test(url.pathname));
      route = matching.find((candidate) => candidate.method === method);
      if (route === undefined) {
        throw matching.length > 0 ? new BridgeError('method_not_allowed', `${method} is not allowed on ${url.pathname}`) : new BridgeError('not_found', `drover web has no ${url.pathname}`);
      }
      const params = route.pattern.exec(url.pathname)!.slice(1).map((part) => {
        try {
          return decodeURIComponent(part);
        } catch {
          throw new BridgeError('bad_request', `${JSON.stringify(part)} in ${url.pathname} is not a valid URL path segment`);
        }
      });
      if (method !== 'GET' || route.action === 'events') {
        const verdict = originVerdict(
          { origin: request.headers.origin, host: request.headers.host, secFetchSite: request.headers['sec-fetch-site'] as string | undefined },
          method !== 'GET',
        );
        if (!verdict.ok) throw new BridgeError('forbidden_origin', verdict.reason);
      }
      const device = route.open ? null : (devices.authenticate(deviceToken(request)) ?? null);
      if (!route.open && device === null) throw new BridgeError('unauthorized', 'this browser is not paired with drover web (or its pairing was revoked); run `drover web pair` and enter the code');
      context = { request, response, url, params, device, audit: {}, target: null };
      if (route.write) {
        if (readOnly) throw new BridgeError('read_only', 'drover web runs with --read-only: it changes nothing');
        const taken = limiter.take(device!.deviceId);
        if (!taken.ok) {
          response.setHeader('Retry-After', String(taken.retryAfterSeconds));
          throw new BridgeError('rate_limited', `too many writes; try again in ${taken.retryAfterSeconds} s`, { details: { retry_after_seconds: taken.retryAfterSeconds } });
        }
      }
      const result = await route.handler(context);
      if (result !== undefined && !response.headersSent) sendJson(response, 200, result);
      if (route.write || route.action === 'pair') record(route, context, remote, 200, null);
    } catch (error) {
      const { status, body } = errorBody(error);
      if (status === 500) log(`${method} ${url.pathname}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (route !== undefined && (route.write || route.action === 'pair')) record(route, context, remote, status, body.error.code, request.headers.origin);
      if (!response.headersSent) sendJson(response, status, body);
      else response.destroy();
    }
  }

  function record(route: Route, context: RequestContext | undefined, remote: string | null, status: number, code: string | null, origin?: string): void {
    try {
      audit.append({
        device: context?.device?.deviceId ?? null,
        remote,
        action: route.action,
        target: context?.target ?? null,
        status,
        code,
        detail: { ...(context?.audit ?? {}), ...(origin !== undefined && code === 'forbidden_origin' ? { origin } : {}) },
      });
    } catch (error) {
      log(`cannot append to the audit log ${audit.path}: ${(error as Error).message}`);
    }
  }

  function serveFile(pathname: string, response: ServerResponse): void {
    const file =
      pathname === '/' || pathname === '/index.html'
        ? { body: shell, type: 'text/html; charset=utf-8' }
        : pathname === '/assets/page.js' && assets.js !== undefined
          ? { body: assets.js, type: 'text/javascript; charset=utf-8' }
          : pathname === '/assets/page.css' && assets.css !== undefined
            ? { body: assets.css, type: 'text/css; charset=utf-8' }
            : undefined;
    if (file === undefined) throw new BridgeError('not_found', `drover web has no ${pathname}`);
    response.writeHead(200, { 'Content-Type': file.type, 'Cache-Control': 'no-cache' });
    response.end(file.body);
  }

  const server: HttpServer = createServer((request, response) => void handle(request, response));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port: options.port ?? DEFAULT_WEB_PORT }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    observer.close();
    fleet?.close();
    throw new BridgeError('unreachable', `drover web cannot listen on ${host}:${options.port ?? DEFAULT_WEB_PORT}: ${(error as Error).message}`, { cause: error });
  }
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? DEFAULT_WEB_PORT);

  return {
    url: `http://${urlHost(host)}:${port}/`,
    host,
    port,
    devices,
    hub,
    observer,
    auditPath: audit.path,
    close: async () => {
      observer.close();
      fleet?.close();
      for (const response of streams) response.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
