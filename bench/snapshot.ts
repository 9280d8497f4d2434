/**
 * drover's snapshot against python3-libtmux listing the same server: N = 10, 100, 500 panes
 * on an owned server. libtmux runs in one long-lived python3 process that times itself, so
 * interpreter start-up is not charged to it.
 */
import { Server } from '../src/tmux/index.js';
import { run as runChild } from '../src/process/index.js';
import { log, median, round, sample } from './support.js';

const PYTHON = '/usr/bin/python3';
const PANES_PER_WINDOW = 10;
const SAMPLES = 30;

/** libtmux's listing cost grows with the pane count; fewer samples keep N = 500 to minutes. */
function libtmuxSamples(size: number): number {
  return size >= 500 ? 5 : size >= 100 ? 10 : SAMPLES;
}

const LIBTMUX_SCRIPT = `
import json, sys, time
from libtmux import Server
server = Server(socket_path=sys.argv[1])
samples = int(sys.argv[2])
ids = sorted(p.pane_id for p in server.panes)
times = []
for _ in range(samples):
    started = time.perf_counter()
    sessions = server.sessions
    windows = server.windows
    rows = [(p.pane_id, p.window_id, p.pane_current_command, p.pane_current_path, p.pane_width, p.pane_height) for p in server.panes]
    times.append((time.perf_counter() - started) * 1000)
print(json.dumps({"ids": ids, "times": times}))
`;

async function buildPanes(server: Server, total: number): Promise<void> {
  const session = await server.newSession({ name: 'bench', width: 200, height: 60 });
  let made = 1;
  let window = (await session.listWindows())[0]!;
  while (made < total) {
    if ((await window.listPanes()).length >= PANES_PER_WINDOW) {
      window = await session.newWindow();
      made += 1;
      continue;
    }
    const splits = Math.min(PANES_PER_WINDOW - (await window.listPanes()).length, total - made);
    const commands: string[][] = [];
    for (let i = 0; i < splits; i += 1) commands.push(['split-window', '-d', '-t', window.id], ['select-layout', '-t', window.id, 'tiled']);
    const group = await server.runGroup(commands, { timeoutMs: 30_000 });
    if (!group.ok) throw new Error(`could not build panes: ${group.result.stderrText()}`);
    made += splits;
  }
}

async function libtmux(socketPath: string, samples: number): Promise<{ ids: string[]; times: number[] }> {
  const result = await runChild([PYTHON, '-c', LIBTMUX_SCRIPT, socketPath, String(samples)], { timeoutMs: 900_000, limits: { stdoutBytes: 8 * 1024 * 1024 } });
  if (!result.ok) throw new Error(`python3-libtmux failed (install it with apt-get install -y python3-libtmux): ${result.stderrText()}`);
  return JSON.parse(result.text()) as { ids: string[]; times: number[] };
}

async function measure(sizes: number[]): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  for (const size of sizes) {
    // A plain sh per pane: login shells with heavy rc files would dominate building 500 panes.
    const server = await Server.start({ config: 'set -g default-shell /bin/sh\n' });
    try {
      await buildPanes(server, size);
      const snapshot = await server.snapshot();
      const droverIds = snapshot.panes.toArray().map((p) => p.paneId as string).sort();
      const peer = await libtmux(server.endpoint.socketPath, libtmuxSamples(size));
      if (droverIds.length !== size || JSON.stringify(droverIds) !== JSON.stringify(peer.ids)) {
        throw new Error(`correctness check failed at N=${size}: drover saw ${droverIds.length} panes, libtmux ${peer.ids.length}`);
      }
      const droverMs = median(await sample(SAMPLES, () => server.snapshot()));
      await server.connect();
      if ((await server.snapshot()).panes.size !== size) throw new Error(`control-mode snapshot saw a different pane count at N=${size}`);
      const controlMs = median(await sample(SAMPLES, () => server.snapshot()));
      const libtmuxMs = median(peer.times);
      log(
        `N=${String(size).padStart(3)}  drover ${droverMs.toFixed(2)} ms (spawned client), ${controlMs.toFixed(2)} ms (control mode)   libtmux ${libtmuxMs.toFixed(2)} ms   libtmux/drover ${(libtmuxMs / droverMs).toFixed(1)}x, ${(libtmuxMs / controlMs).toFixed(1)}x`,
      );
      figures[`drover_ms_${size}`] = round(droverMs);
      figures[`drover_control_ms_${size}`] = round(controlMs);
      figures[`libtmux_ms_${size}`] = round(libtmuxMs);
      figures[`libtmux_over_drover_${size}`] = round(libtmuxMs / droverMs, 2);
      figures[`libtmux_over_drover_control_${size}`] = round(libtmuxMs / controlMs, 2);
    } finally {
      await server.close();
    }
  }
  return figures;
}

export async function run(args: string[]): Promise<Record<string, number>> {
  const sizes = args.length > 0 ? args.map(Number) : [10, 100, 500];
  log(`snapshot: drover (one tmux call, framed fields) vs python3-libtmux (sessions, windows, panes), median of ${SAMPLES} (libtmux: fewer at large N)`);
  return measure(sizes);
}
