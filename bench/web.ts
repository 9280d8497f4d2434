/**
 * `npm run bench web`: `drover web` over 100 panes on an owned tmux server, wired as the CLI
 * wires it (one control-mode binding for reads, drover's census of agents). Measured:
 * - the time from a send-keys into a pane (once tmux has taken it) to the pane's event reaching
 *   an SSE client, against the anchor's approach: the page polls every 1.5 s, reading the
 *   listing and the open pane's grid, and sees the change on the first poll after it;
 * - the latency of GET /api/snapshot;
 * - the server's heap after an hour's worth of events: a real burst of pane changes through
 *   the whole path, then 360 000 events (100 panes changing once a second for an hour) into
 *   the stream with a client attached, against the bound the event ring sets.
 */
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DEFAULT_EVENT_CAPACITY, startBridge, type Bridge } from '../src/bridge/index.js';
import { tmuxAgentCensus } from '../src/cli/commands/web.js';
import { createMuxPort, TmuxAdapter, tmuxIds } from '../src/mux/index.js';
import { Server } from '../src/tmux/index.js';
import { log, median, percentile, round } from './support.js';

const PANES = 100;
const WINDOWS = 25;
const LATENCY_SAMPLES = 40;
const POLL_SAMPLES = 16;
const POLL_MS = 1500;
const SNAPSHOT_SAMPLES = 40;
const HOUR_EVENTS = PANES * 3600;
const BURST_MS = 15_000;

interface SeenEvent {
  kind: string;
  data: { pane_id?: string; revision?: string };
  at: number;
}

/** A bare SSE client: every event with its arrival time. */
function listen(url: string, token: string, onEvent: (event: SeenEvent) => void): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(`${url}api/events`, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' } }, (response) => {
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const blocks = (buffer + chunk).split('\n\n');
        buffer = blocks.pop()!;
        for (const block of blocks) {
          const kind = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (kind !== undefined && data !== undefined) onEvent({ kind, data: JSON.parse(data) as SeenEvent['data'], at: performance.now() });
        }
      });
      response.on('error', () => undefined);
      resolve(() => sent.destroy());
    });
    sent.on('error', reject);
    sent.end();
  });
}

async function getJson(url: string, token: string): Promise<unknown> {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

function heapMb(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

export async function run(): Promise<Record<string, number | string | boolean>> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const env = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  const owned = await Server.start({ env });
  const state = mkdtempSync(join(tmpdir(), 'drover-bench-web-'));
  let reads: Server | undefined;
  let bridge: Bridge | undefined;
  const closers: (() => void)[] = [];
  try {
    log(`web: drover web over ${PANES} panes (${WINDOWS} windows of ${PANES / WINDOWS}) on an owned tmux server`);
    const session = await owned.newSession({ name: 'bench', width: 200, height: 60, command: ['cat'] });
    for (let window = 0; window < WINDOWS; window += 1) {
      const first = window === 0 ? (await session.listPanes())[0]! : (await session.newWindow({ command: ['cat'], receipt: true })).pane;
      for (let split = 1; split < PANES / WINDOWS; split += 1) await first.split({ direction: 'vertical', command: ['cat'] });
    }
    const panes = (await owned.snapshot()).panes.toArray().map((pane) => pane.paneId);
    if (panes.length !== PANES) throw new Error(`expected ${PANES} panes, tmux made ${panes.length}`);
    // The bench types through its own control connection, so a send costs no process start.
    await owned.connect();

    reads = await Server.open(owned.endpoint, { env, transport: 'control' });
    const mux = createMuxPort(new TmuxAdapter({ server: reads }));
    closers.push(() => void mux.close());
    bridge = await startBridge({ mux, stateDirectory: state, port: 0, census: tmuxAgentCensus(reads, process.cwd()) });
    const { token } = bridge.devices.redeem(bridge.devices.createPairingCode().code, 'bench');

    // The client keeps only what a measurement waits for, so its memory stays out of the server's figure.
    const waiters = new Set<{ paneId: string; resolve: (event: SeenEvent) => void }>();
    let lastRevision: string | undefined;
    let received = 0;
    closers.push(
      await listen(bridge.url, token, (event) => {
        received += 1;
        lastRevision = event.data.revision;
        if (event.kind !== 'pane') return;
        for (const waiter of waiters) {
          if (waiter.paneId !== event.data.pane_id) continue;
          waiters.delete(waiter);
          waiter.resolve(event);
        }
      }),
    );
    const nextEvent = (paneId: string): Promise<SeenEvent> =>
      new Promise((resolve, reject) => {
        const waiter = { paneId, resolve };
        waiters.add(waiter);
        setTimeout(() => {
          if (waiters.delete(waiter)) reject(new Error(`no event for ${paneId} within 10 s`));
        }, 10_000).unref();
      });

    // Correctness first: every pane listed, and a change arrives with the revision the grid then has.
    const snapshot = (await getJson(`${bridge.url}api/snapshot`, token)) as { panes: { pane_id: string }[] };
    if (snapshot.panes.length !== PANES) throw new Error(`the snapshot lists ${snapshot.panes.length} panes, not ${PANES}`);
    const probe = tmuxIds.pane(panes[7]!);
    const arrived = nextEvent(probe);
    await owned.pane(panes[7]!).sendText('probe\n');
    await arrived;
    await delay(500);
    const grid = (await getJson(`${bridge.url}api/panes/${encodeURIComponent(probe)}/grid`, token)) as { revision: string; text: string };
    if (!grid.text.includes('probe')) throw new Error('the grid does not show what was typed');
    if (lastRevision !== grid.revision) throw new Error('the stream did not carry the revision the grid shows');

    const latencies: number[] = [];
    for (let sample = 0; sample < LATENCY_SAMPLES; sample += 1) {
      const native = panes[(sample * 37) % PANES]!;
      const seen = nextEvent(tmuxIds.pane(native));
      await owned.pane(native).sendText(`s${sample}\n`);
      const sent = performance.now();
      latencies.push((await seen).at - sent);
      await delay(150);
    }

    const polled: number[] = [];
    const watched = panes[42]!;
    for (let sample = 0; sample < POLL_SAMPLES; sample += 1) {
      // The anchor's page: one listing and the open pane's grid every 1.5 s; the changes land at
      // phases spread evenly over the interval, as changes nobody schedules do.
      const before = (await mux.readGrid(tmuxIds.pane(watched), { scope: 'viewport', styling: 'preserve' })).ok;
      if (!before) throw new Error('the poller cannot read the pane');
      const phase = ((sample + 0.5) / POLL_SAMPLES) * POLL_MS;
      const change = delay(phase).then(async () => {
        await owned.pane(watched).sendText(`p${sample}\n`);
        return performance.now();
      });
      let sentAt: number | undefined;
      void change.then((at) => (sentAt = at));
      for (;;) {
        const tick = performance.now();
        await mux.snapshot();
        const read = await mux.readGrid(tmuxIds.pane(watched), { scope: 'viewport', styling: 'preserve' });
        if (read.ok && read.value.text.includes(`p${sample}`) && sentAt !== undefined) {
          polled.push(performance.now() - sentAt);
          break;
        }
        await delay(Math.max(0, POLL_MS - (performance.now() - tick)));
      }
      await change;
    }

    const snapshotTimes: number[] = [];
    for (let sample = 0; sample < SNAPSHOT_SAMPLES; sample += 1) {
      const started = performance.now();
      await getJson(`${bridge.url}api/snapshot`, token);
      snapshotTimes.push(performance.now() - started);
    }

    // Memory: a real burst of changes through watch, screen reads and stream, then an hour of events.
    const heapStart = heapMb(gc);
    const burstFrom = received;
    const burstEnd = performance.now() + BURST_MS;
    for (let index = 0; performance.now() < burstEnd; index += 1) {
      await owned.pane(panes[index % PANES]!).sendText(`b${index}\n`);
      await delay(5);
    }
    await delay(1000);
    const burstEvents = received - burstFrom;
    const heapAfterBurst = heapMb(gc);
    const hourFrom = received;
    for (let index = 0; index < HOUR_EVENTS; index += 1) {
      const paneId = tmuxIds.pane(panes[index % PANES]!);
      bridge.hub.publish('pane', { pane_id: paneId, pane_key: bridge.mux.observer.paneKey(paneId), revision: `hour-${index}` });
      // An hour's events come over an hour: the client reads each thousand before the next (a client
      // that falls a megabyte behind is dropped, and reconnects from its Last-Event-ID).
      if (index % 1000 === 999) await eventually(() => received - hourFrom >= index + 1, 10_000);
    }
    await eventually(() => lastRevision === `hour-${HOUR_EVENTS - 1}`, 10_000);
    const heapAfterHour = heapMb(gc);

    const droverMedian = median(latencies);
    const pollMedian = median(polled);
    log(`send-keys → SSE event   median ${droverMedian.toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms (${LATENCY_SAMPLES} samples)`);
    log(`1.5 s poll of the listing and the open grid   median ${pollMedian.toFixed(0)} ms, p95 ${percentile(polled, 95).toFixed(0)} ms (${POLL_SAMPLES} samples)`);
    log(`poll/drover ${(pollMedian / droverMedian).toFixed(1)}x`);
    log(`GET /api/snapshot (${PANES} panes)   median ${median(snapshotTimes).toFixed(1)} ms, p95 ${percentile(snapshotTimes, 95).toFixed(1)} ms`);
    log(`heap: ${heapStart.toFixed(1)} MB at rest; ${heapAfterBurst.toFixed(1)} MB after a ${BURST_MS / 1000} s burst (${burstEvents} events); ${heapAfterHour.toFixed(1)} MB after ${HOUR_EVENTS} more; the ring keeps ${bridge.hub.size} (capacity ${DEFAULT_EVENT_CAPACITY})`);
    return {
      panes: PANES,
      sse_latency_median_ms: round(droverMedian, 2),
      sse_latency_p95_ms: round(percentile(latencies, 95), 2),
      poll_latency_median_ms: round(pollMedian, 1),
      poll_latency_p95_ms: round(percentile(polled, 95), 1),
      poll_over_drover_latency: round(pollMedian / droverMedian, 1),
      snapshot_median_ms: round(median(snapshotTimes), 2),
      snapshot_p95_ms: round(percentile(snapshotTimes, 95), 2),
      burst_events: burstEvents,
      hour_events: HOUR_EVENTS,
      heap_rest_mb: round(heapStart, 1),
      heap_after_burst_mb: round(heapAfterBurst, 1),
      heap_after_hour_mb: round(heapAfterHour, 1),
      heap_growth_over_hour_mb: round(heapAfterHour - heapStart, 1),
      event_ring_events: bridge.hub.size,
    };
  } finally {
    for (const close of closers) close();
    await bridge?.close();
    await reads?.close();
    await owned.close();
    rmSync(state, { recursive: true, force: true });
  }
}

async function eventually(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error('the stream did not deliver the hour of events');
    await delay(10);
  }
}
