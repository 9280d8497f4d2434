/**
 * The layout: what the multiplexer declares (config), every space, tab and pane (snapshot),
 * "look now", a new tab or space, and the multiplexer's other sessions where it keeps several.
 */
import type { MuxCreatedPane } from '../../mux/index.js';
import { unwrap } from '../agent-input.js';
import type { HostPanes } from '../hosts.js';
import type { PaneObserver } from '../observer.js';
import { KEY_TRAY, type ConfigView, type CreatedPaneView, type SessionsView, type SnapshotView } from '../protocol.js';
import { triageCounts, triageOrder } from '../triage.js';
import { json, stringField, type Route } from '../routing.js';
import type { MuxSupervisor } from '../supervisor.js';

export interface TopologyRoutesContext {
  readonly mux: MuxSupervisor;
  /** Other machines' panes, when hosts are configured. */
  readonly remote?: HostPanes;
  readonly readOnly: boolean;
  readonly version: string;
  /** Why there is no fleet now; null when there is one. */
  readonly fleetUnavailable: () => string | null;
}

/** What the page follows: the multiplexer's declaration, its keys tray, read-only, the fleet. */
export function configView({ mux, readOnly, version, fleetUnavailable }: TopologyRoutesContext): ConfigView {
  const { port } = mux;
  return {
    version,
    mux: port.mux,
    read_only: readOnly,
    supports: port.declaration.supports,
    unsupported_keys: port.declaration.unsupportedKeys,
    notes: port.declaration.notes,
    topology_latency: port.declaration.topologyLatency,
    spaces: port.declaration.spaces,
    keys_tray: KEY_TRAY.map(({ label, key }) => ({ label, key, refused: port.keyProblem(key) ?? null })),
    fleet: { available: fleetUnavailable() === null, reason: fleetUnavailable() },
  };
}

/** This machine's snapshot with every host's panes after its own, and the hosts' health. */
export function withHosts(local: SnapshotView, remote: HostPanes | undefined): SnapshotView {
  if (remote === undefined) return local;
  const { panes: remotePanes, hosts } = remote.view();
  const panes = [...local.panes, ...remotePanes];
  return { ...local, panes, triage_keys: triageOrder(panes, (pane) => pane.pane_key), counts: triageCounts(panes), hosts };
}

function createdView(observer: PaneObserver, created: MuxCreatedPane): CreatedPaneView {
  return { pane_id: created.paneId, pane_key: observer.paneKey(created.paneId), tab_id: created.tabId, space_id: created.spaceId };
}

/** An optional string field, with null and absence alike meaning "none". */
function optional(body: Record<string, unknown>, name: string): string | undefined {
  return stringField(body, name, { optional: true }) ?? undefined;
}

export function topologyRoutes(context: TopologyRoutesContext): Route[] {
  const { mux } = context;
  return [
    { method: 'GET', pattern: /^\/api\/config$/, action: 'config', handle: async () => json(configView(context)) },
    { method: 'GET', pattern: /^\/api\/snapshot$/, action: 'snapshot', handle: async () => json(withHosts(await mux.snapshot(), context.remote)) },
    {
      method: 'POST',
      pattern: /^\/api\/refresh$/,
      action: 'refresh',
      handle: () =>
        mux.run(async (observer) => {
          await observer.lookNow();
          return json({ refreshed: true });
        }),
    },
    {
      method: 'GET',
      pattern: /^\/api\/sessions$/,
      action: 'sessions',
      handle: () =>
        mux.run(async (observer) => {
          const listed = await observer.port.listSessions();
          const view: SessionsView =
            !listed.ok && listed.reason === 'unsupported'
              ? { available: false, reason: listed.detail, sessions: [] }
              : { available: true, reason: null, sessions: unwrap(listed).map((session) => ({ name: session.name, current: session.current })) };
          return json(view);
        }),
    },
    {
      method: 'POST',
      pattern: /^\/api\/tabs$/,
      action: 'new-tab',
      write: true,
      handle: (call) =>
        mux.run(async (observer) => {
          const body = await call.request.body();
          const spaceId = stringField(body, 'space_id')!;
          call.audit.target = spaceId;
          return json(createdView(observer, unwrap(await observer.port.createTab({ spaceId, label: optional(body, 'label'), cwd: optional(body, 'cwd') }))));
        }),
    },
    {
      method: 'POST',
      pattern: /^\/api\/spaces$/,
      action: 'new-space',
      write: true,
      handle: (call) =>
        mux.run(async (observer) => {
          const body = await call.request.body();
          return json(createdView(observer, unwrap(await observer.port.createSpace({ label: optional(body, 'label'), cwd: optional(body, 'cwd') }))));
        }),
    },
  ];
}
