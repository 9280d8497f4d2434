import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBridge, type Bridge, type BridgeOptions, type EventKind, type MuxOpener } from '../../src/bridge/index.js';
import { createMuxPort, TmuxAdapter } from '../../src/mux/index.js';
import { Endpoint, Server } from '../../src/tmux/index.js';
import { eventually } from '../support/wait.js';

/** The page as the build bundles it, beside the compiled CLI (dist/cli/web). */
export const PAGE_ASSETS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'cli', 'web');

export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body as JSON (undefined when it is not JSON). */
  readonly json: Record<string, unknown> & { error?: { code: string; message: string } & Record<string, unknown> };
}

export interface CallOptions {
  readonly method?: 'GET' | 'POST' | 'PUT';
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** The device token (sent as a Bearer token); null sends none. */
  readonly token?: string | null;
}

/** A paired bridge on a free loopback port, closed (and its state removed) after the test. */
export interface WebWorld {
  readonly bridge: Bridge;
  readonly token: string;
  readonly stateDirectory: string;
  readonly origin: string;
  call(path: string, options?: CallOptions): Promise<HttpAnswer>;
  /** A write as the page sends it: POST, JSON, this page's Origin, the device token. */
  post(path: string, body?: unknown, options?: CallOptions): Promise<HttpAnswer>;
  stream(options?: StreamOptions): Promise<EventStream>;
}

export function request(url: string, options: CallOptions & { token?: string | null } = {}): Promise<HttpAnswer> {
  const target = new URL(url);
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }), ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: options.method ?? 'GET', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: HttpAnswer['json'];
        try {
          json = JSON.parse(text) as HttpAnswer['json'];
        } catch {
          json = {};
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
      });
    });
    sent.on('error', reject);
    sent.end(payload);
  });
}

export interface StreamEventSeen {
  readonly id: string;
  readonly kind: EventKind;
  readonly data: Record<string, unknown>;
}

export interface StreamOptions {
  readonly lastEventId?: string;
  readonly headers?: Record<string, string>;
  readonly token?: string | null;
}

export interface EventStream {
  readonly status: number;
  readonly events: StreamEventSeen[];
  /** The server ended the stream. */
  readonly ended: boolean;
  /** The first event (from now on, or already seen after `from`) that matches. */
  next(what: string, match: (event: StreamEventSeen) => boolean, options?: { from?: number; timeoutMs?: number }): Promise<StreamEventSeen>;
  close(): void;
}

/** An SSE client: parses the stream into events as they arrive. */
export function openStream(url: string, options: StreamOptions = {}): Promise<EventStream> {
  const target = new URL(url);
  const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, headers }, (response) => {
      const events: StreamEventSeen[] = [];
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const blocks = (buffer + chunk).split('\n\n');
        buffer = blocks.pop()!;
        for (const block of blocks) {
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            const at = line.indexOf(': ');
            if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
          }
          if (fields.has('event')) events.push({ id: fields.get('id') ?? '', kind: fields.get('event') as EventKind, data: JSON.parse(fields.get('data') ?? '{}') as Record<string, unknown> });
        }
      });
      response.on('error', () => undefined);
      let ended = false;
      response.on('end', () => (ended = true));
      resolve({
        status: response.statusCode ?? 0,
        events,
        get ended() {
          return ended;
        },
        next: (what, match, { from = 0, timeoutMs = 20_000 } = {}) => eventually(what, () => events.slice(from).find(match), timeoutMs),
        close: () => {
          response.destroy();
          sent.destroy();
        },
      });
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** What tears a world down: a test's context, or a suite's own list. */
export interface Teardown {
  after(fn: () => unknown): void;
}

export function tempDirectory(t: Teardown, prefix = 'drover-web-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function startWebWorld(t: Teardown, options: Omit<BridgeOptions, 'stateDirectory'> & { stateDirectory?: string }): Promise<WebWorld> {
  const stateDirectory = options.stateDirectory ?? tempDirectory(t);
  const bridge = await startBridge({ port: 0, ...options, stateDirectory });
  t.after(() => bridge.close());
  const { token } = bridge.devices.redeem(bridge.devices.createPairingCode().code, 'test');
  const origin = bridge.url.replace(/\/$/, '');
  const call = (path: string, callOptions: CallOptions = {}): Promise<HttpAnswer> =>
    request(`${origin}${path}`, { ...callOptions, token: callOptions.token === undefined ? token : callOptions.token });
  return {
    bridge,
    token,
    stateDirectory,
    origin,
    call,
    post: (path, body = {}, callOptions = {}) => call(path, { method: 'POST', body, ...callOptions, headers: { Origin: origin, ...callOptions.headers } }),
    stream: (streamOptions = {}) => openStream(`${origin}/api/events`, { ...streamOptions, token: streamOptions.token === undefined ? token : streamOptions.token }),
  };
}

/** A teardown list for a whole describe() block, run by its after() hook in reverse order. */
export function suiteTeardown(): Teardown & { run(): Promise<void> } {
  const steps: (() => unknown)[] = [];
  return {
    after: (fn) => steps.push(fn),
    run: async () => {
      for (const step of steps.reverse()) await step();
    },
  };
}

/**
 * How `drover web` opens a port onto whichever tmux server answers at a socket now: a control-mode
 * binding of its own and the port over it. `resyncMs`: how soon the watch notices a server gone.
 */
export function tmuxOpener(socketPath: string, resyncMs: number): MuxOpener {
  return async () => {
    const server = await Server.open(Endpoint.fromSocketPath(socketPath), { transport: 'control' });
    const port = createMuxPort(new TmuxAdapter({ server, resyncMs }));
    return {
      port,
      close: async () => {
        await port.close();
        await server.close();
      },
    };
  };
}
