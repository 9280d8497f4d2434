/**
 * The event stream: hints as Server-Sent Events, the missed ones replayed after a reconnect
 * (Last-Event-ID), a ping per heartbeat, a revoked device cut off within a second, and a
 * stream too far behind dropped (the browser reconnects and resumes from its last id).
 */
import type { DeviceRegistry } from '../devices.js';
import { formatEvent, type EventHub, type StreamEvent } from '../events.js';
import { deviceToken } from '../middleware.js';
import type { Route, StreamSink } from '../routing.js';

const MAX_STREAM_BACKLOG_BYTES = 1024 * 1024;
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** How often an open stream's device is checked: a revocation (`drover web revoke`, from any process) ends it by then. */
const REVOCATION_CHECK_MS = 1000;

export interface EventRoutesContext {
  readonly hub: EventHub;
  readonly devices: DeviceRegistry;
  readonly heartbeatMs?: number;
}

export interface EventRoutes {
  readonly routes: Route[];
  /** Ends every open stream (the server is closing). */
  closeAll(): void;
}

export function eventRoutes({ hub, devices, heartbeatMs = DEFAULT_HEARTBEAT_MS }: EventRoutesContext): EventRoutes {
  const open = new Set<StreamSink>();
  const route: Route = {
    method: 'GET',
    pattern: /^\/api\/events$/,
    action: 'events',
    stream: true,
    handle: async (call) => ({
      kind: 'stream',
      status: 200,
      headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' },
      open: (sink) => {
        const token = deviceToken(call.request);
        sink.write('retry: 2000\n\n');
        const send = (event: StreamEvent): void => {
          if (sink.backlog > MAX_STREAM_BACKLOG_BYTES) sink.destroy();
          else sink.write(formatEvent(event));
        };
        const lastEventId = call.request.headers['last-event-id'];
        if (lastEventId !== undefined && lastEventId !== '') {
          const missed = hub.since(lastEventId);
          if (missed === undefined) send({ id: hub.lastId(), kind: 'resync', data: {} });
          else for (const event of missed) send(event);
        }
        const unsubscribe = hub.subscribe(send);
        const heartbeat = setInterval(() => sink.write(': ping\n\n'), heartbeatMs);
        // The devices file is re-read only when it changed: a check is one stat.
        const revocation = setInterval(() => {
          if (devices.authenticate(token) === undefined) sink.end();
        }, Math.min(REVOCATION_CHECK_MS, heartbeatMs));
        open.add(sink);
        sink.onClose(() => {
          clearInterval(heartbeat);
          clearInterval(revocation);
          unsubscribe();
          open.delete(sink);
        });
      },
    }),
  };
  return {
    routes: [route],
    closeAll: () => {
      for (const sink of open) sink.end();
    },
  };
}
