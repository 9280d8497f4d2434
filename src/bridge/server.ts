/**
 * `drover web`: the HTTP API, the event stream and the page, over a mux port, with node:http.
 *
 * A request becomes a call (routing.ts), passes the one middleware chain (middleware.ts: Host
 * allowlist, audit, Origin, device, read-only, rate limit) and reaches its route, a plain
 * function in one of the route modules (routes/: page, pairing, topology, panes, fleet, events).
 * Which run of the multiplexer is served, and the switch to a new run after a restart, is the
 * supervisor's (supervisor.ts).
 */
import { createServer, type Server as HttpServer } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { FleetRuntime } from '../fleet/index.js';
import type { MuxPort } from '../mux/index.js';
import { AuditLog } from './audit.js';
import { DeviceRegistry } from './devices.js';
import { BridgeError } from './errors.js';
import { EventHub } from './events.js';
import { FleetApi } from './fleet.js';
import { HostPanes, type HostPanesOptions } from './hosts.js';
import { apiRequest, writeResponse } from './http.js';
import { audit, hostAllowlist, pairedDevice, rateLimit, readOnly, sameOrigin } from './middleware.js';
import type { AgentCensus } from './observer.js';
import { PaneQueue } from './pane-queue.js';
import { eventRoutes } from './routes/events.js';
import { fleetRoutes } from './routes/fleet.js';
import { pageRoutes } from './routes/page.js';
import { pairingRoutes } from './routes/pairing.js';
import { paneRoutes } from './routes/panes.js';
import { topologyRoutes } from './routes/topology.js';
import { errorBody, errorResponse, Router, runChain, type ApiRequest, type ApiResponse, type Middleware } from './routing.js';
import { DEFAULT_WRITE_RATE, HostAllowlist, isLoopbackAddress, isWildcardAddress, RateLimiter, type RateLimit } from './security.js';
import { MuxSupervisor, type MuxOpener } from './supervisor.js';

/** How often drover web without a fleet asks whether a fleet database exists now. */
const FLEET_LOOK_MS = 1000;

export const DEFAULT_WEB_PORT = 7717;

export interface BridgeOptions {
  /** A port the caller owns and closes. Give this or `openMux`. */
  readonly mux?: MuxPort;
  /** drover's census of agents for `mux`. */
  readonly census?: AgentCensus;
  /**
   * Opens a port (with its census) onto whichever run of the multiplexer answers now: the first
   * one, unless `mux` is given, and a new one each time the multiplexer is replaced by another
   * run. drover web closes the ports it opened.
   */
  readonly openMux?: MuxOpener;
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
  /**
   * Without `fleet`: opens the fleet once its store exists (undefined while it does not), asked
   * once a second, so a fleet created after drover web started is served without a restart.
   * The caller closes what it opened.
   */
  readonly openFleet?: () => Promise<FleetRuntime | undefined>;
  readonly writeRate?: RateLimit;
  /** How often an open stream is pinged (its device is checked every second, or this often when sooner). */
  readonly heartbeatMs?: number;
  /** How long after a failed attempt to open a port onto a restarted multiplexer it is tried again. */
  readonly reopenMs?: number;
  readonly version?: string;
  readonly log?: (line: string) => void;
  /** Other machines whose panes the page shows beside this one's (see HostPanes); the caller closes the hosts. */
  readonly hosts?: Omit<HostPanesOptions, 'hub' | 'log'>;
}

export interface Bridge {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly devices: DeviceRegistry;
  readonly hub: EventHub;
  /** The run of the multiplexer served now, and its observer. */
  readonly mux: MuxSupervisor;
  readonly auditPath: string;
  close(): Promise<void>;
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

export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? (() => undefined);
  const devices = new DeviceRegistry(options.stateDirectory);
  if (!isLoopbackAddress(host) && !devices.hasPairing()) {
    throw new BridgeError(
      'pairing_required',
      `drover web listens on ${host} (other machines can reach it) only once pairing is set up: run \`drover web pair\` first, then open the address it prints on the device`,
    );
  }
  const auditLog = new AuditLog(join(options.stateDirectory, 'audit.log'));
  const hub = new EventHub();
  const mux = await MuxSupervisor.start({ hub, port: options.mux, census: options.census, open: options.openMux, retryMs: options.reopenMs, log });
  const remote = options.hosts === undefined || options.hosts.hosts.names.length === 0 ? undefined : new HostPanes({ ...options.hosts, hub, log });
  await remote?.start();
  let fleet = options.fleet === undefined ? undefined : new FleetApi(options.fleet, hub);
  const noFleet = options.fleetUnavailable ?? 'drover web was started without a fleet database';
  const fleetUnavailable = (): string | null => (fleet === undefined ? noFleet : null);
  let closed = false;
  const fleetLook = fleet === undefined && options.openFleet !== undefined ? lookForFleet(options.openFleet) : undefined;
  // A write locks the pane where the last listing saw it; a pane that listing did not have, the write finds gone.
  const queue = new PaneQueue(
    (pane, write) => fleet === undefined ? write() : fleet.withPaneInput({ port: pane.port, paneId: pane.paneId, incarnation: pane.observer.incarnation, spaceId: pane.observer.listed(pane.paneId)?.spaceId }, write),
  );
  const events = eventRoutes({ hub, devices, heartbeatMs: options.heartbeatMs });
  const router = new Router([
    ...pageRoutes(options.assets),
    ...pairingRoutes(devices),
    ...topologyRoutes({ mux, remote, readOnly: options.readOnly === true, version: options.version ?? '', fleetUnavailable }),
    ...paneRoutes({ mux, queue, remote }),
    ...fleetRoutes({ fleet: () => fleet, unavailable: noFleet }),
    ...events.routes,
  ]);
  const chain: Middleware[] = [
    hostAllowlist(new HostAllowlist(isWildcardAddress(host) ? interfaceAddresses() : [host], options.allowHosts ?? [])),
    audit(auditLog, log),
    sameOrigin,
    pairedDevice(devices),
    readOnly(options.readOnly === true),
    rateLimit(new RateLimiter(options.writeRate ?? DEFAULT_WRITE_RATE)),
  ];
  fleet?.watch();

  /** Asks for the fleet once a second until it opens; the page hears of it as a resync. */
  function lookForFleet(open: () => Promise<FleetRuntime | undefined>): NodeJS.Timeout {
    let looking = false;
    const timer = setInterval(() => {
      if (looking) return;
      looking = true;
      open()
        .then((runtime) => {
          if (runtime === undefined || closed || fleet !== undefined) return;
          clearInterval(timer);
          fleet = new FleetApi(runtime, hub);
          fleet.watch();
          log('a fleet database appeared; serving its fleets');
          hub.publish('resync', {});
        })
        .catch((error: unknown) => log(`opening the fleet database: ${(error as Error).message}`))
        .finally(() => (looking = false));
    }, FLEET_LOOK_MS);
    timer.unref();
    return timer;
  }

  const answer = async (request: ApiRequest): Promise<ApiResponse> => {
    try {
      return await runChain(chain, { request, ...router.resolve(request.method, request.path), device: null, audit: { target: null, detail: {} } });
    } catch (error) {
      if (errorBody(error).status === 500) log(`${request.method} ${request.path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      return errorResponse(error);
    }
  };

  const server: HttpServer = createServer((request, response) => void answer(apiRequest(request)).then((answered) => writeResponse(response, answered)));
  const stop = async (): Promise<void> => {
    closed = true;
    clearInterval(fleetLook);
    remote?.close();
    fleet?.close();
    await mux.close();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port: options.port ?? DEFAULT_WEB_PORT }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await stop();
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
    mux,
    auditPath: auditLog.path,
    close: async () => {
      events.closeAll();
      await stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
