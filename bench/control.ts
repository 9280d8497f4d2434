/**
 * `npm run bench control [-- --count N --events N]`: the cost of one tmux command over a
 * spawned client, over drover's control connection (one at a time, and pipelined) and over a
 * bare control-mode loop in Python with no library (the practical floor); then the latency
 * from a rename issued by another client to drover's event.
 */
import { performance } from 'node:perf_hooks';
import { run as runChild } from '../src/process/index.js';
import { Server, type ControlConnection, type ControlEvent, type Subscription } from '../src/tmux/index.js';
import { log, median, round } from './support.js';

const FORMAT = '#{pane_id}';

/** Python 3, standard library only: attach, then the same commands sequentially and pipelined. */
const PYTHON_RAW = String.raw`
import json, os, subprocess, sys, threading, time
tmux, socket, session, count, expected = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5].encode()
p = subprocess.Popen([tmux, '-N', '-S', socket, '-C', 'attach-session', '-t', session, '-f', 'ignore-size,no-output'],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
fd = p.stdout.fileno()
pending = b''
def lines():
    global pending
    while True:
        nl = pending.find(b'\n')
        if nl >= 0:
            line, pending = pending[:nl], pending[nl + 1:]
            yield line
        else:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise SystemExit('tmux closed the control stream')
            pending += chunk
reader = lines()
def block():
    body = None
    for line in reader:
        if body is None:
            if line.startswith(b'%begin '):
                body = []
        elif line.startswith(b'%end ') or line.startswith(b'%error '):
            return line.startswith(b'%end '), body
        else:
            body.append(line)
block()
command = b"display-message -p '#{pane_id}'\n"
bad = 0
start = time.perf_counter()
for _ in range(count):
    p.stdin.write(command)
    ok, body = block()
    bad += not ok or body != [expected]
sequential = time.perf_counter() - start
start = time.perf_counter()
writer = threading.Thread(target=lambda: p.stdin.write(command * count))
writer.start()
for _ in range(count):
    ok, body = block()
    bad += not ok or body != [expected]
pipelined = time.perf_counter() - start
writer.join()
p.stdin.close()
p.wait()
print(json.dumps({'sequential_ms': sequential * 1000, 'pipelined_ms': pipelined * 1000, 'wrong_replies': bad}))
`;

function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} needs a positive integer`);
  return value;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

function check(label: string, stdout: Buffer, expected: string): void {
  if (stdout.toString() !== `${expected}\n`) throw new Error(`${label} answered ${JSON.stringify(stdout.toString())}, not ${expected}`);
}

async function nextRename(events: Subscription, name: string): Promise<ControlEvent> {
  for (;;) {
    const result = await events.next({ timeoutMs: 10_000 });
    if (result.done) throw new Error('the event stream ended');
    if (result.value.kind === 'window-renamed' && result.value.name === name) return result.value;
  }
}

async function renameLatencies(samples: number, window: string, issue: (name: string) => Promise<unknown>, events: Subscription, prefix: string): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const name = `${prefix}${i}`;
    const started = performance.now();
    const issued = issue(name);
    await nextRename(events, name);
    latencies.push(performance.now() - started);
    await issued;
  }
  log(`  ${prefix.padEnd(8)} median ${median(latencies).toFixed(3)} ms over ${samples} renames of ${window}`);
  return latencies;
}

export async function run(args: string[]): Promise<Record<string, number | string | boolean>> {
  const count = option(args, '--count', 2000);
  const eventSamples = option(args, '--events', 200);
  const env = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  const server = await Server.start({ env });
  const connections: ControlConnection[] = [];
  try {
    const session = await server.newSession({ name: 'bench', receipt: true });
    const paneId = session.pane.id;
    const command = ['display-message', '-p', FORMAT];
    const connection = await server.openControl({ session: session.session, output: false });
    connections.push(connection);
    // The same pipelining depth as the Python loop, which writes every command before reading.
    const deep = await server.openControl({ session: session.session, output: false, limits: { maxExchanges: count } });
    connections.push(deep);
    const exec = (): ReturnType<ControlConnection['execute']> => connection.execute(command, { timeoutMs: 30_000 });
    const execDeep = (): ReturnType<ControlConnection['execute']> => deep.execute(command, { timeoutMs: 30_000 });
    const pipelined = async (fn: typeof exec): Promise<void> => {
      const results = await Promise.all(Array.from({ length: count }, fn));
      results.forEach((result) => check('pipelined control connection', result.stdout, paneId));
    };

    log(`control mode benchmark: ${count} × display-message -p '${FORMAT}' (tmux ${await server.version()})`);
    check('spawned client', (await server.run(command)).stdout, paneId);
    check('control connection', (await exec()).stdout, paneId);
    // Correctness, and a warm-up long enough for the JIT, so steady state rather than start-up is measured.
    for (let round = 0; round < 4; round += 1) {
      await pipelined(exec);
      await pipelined(execDeep);
      for (let i = 0; i < 200; i += 1) check('control connection', (await exec()).stdout, paneId);
    }

    const spawnMs = await timed(async () => {
      for (let i = 0; i < count; i += 1) check('spawned client', (await server.run(command)).stdout, paneId);
    });
    const sequentialMs = await timed(async () => {
      for (let i = 0; i < count; i += 1) check('control connection', (await exec()).stdout, paneId);
    });
    const pipelinedMs = await timed(() => pipelined(exec));
    const deepMs = await timed(() => pipelined(execDeep));
    const raw = await runChild(['python3', '-c', PYTHON_RAW, server.endpoint.executable, server.endpoint.socketPath, session.session.id, String(count), paneId], {
      timeoutMs: 300_000,
      env,
    });
    if (!raw.ok) throw new Error(`the Python control-mode loop failed: ${raw.stderrText().trim()}`);
    const python = JSON.parse(raw.text()) as { sequential_ms: number; pipelined_ms: number; wrong_replies: number };
    if (python.wrong_replies !== 0) throw new Error(`the Python loop saw ${python.wrong_replies} wrong replies`);

    const per = (ms: number): number => ms / count;
    log(`  spawned client per command      ${per(spawnMs).toFixed(4)} ms/command`);
    log(`  drover control, sequential      ${per(sequentialMs).toFixed(4)} ms/command`);
    log(`  drover control, pipelined (32)  ${per(pipelinedMs).toFixed(4)} ms/command`);
    log(`  drover control, all in flight   ${per(deepMs).toFixed(4)} ms/command`);
    log(`  raw Python loop, sequential     ${per(python.sequential_ms).toFixed(4)} ms/command`);
    log(`  raw Python loop, pipelined      ${per(python.pipelined_ms).toFixed(4)} ms/command`);
    log(`  spawn / control sequential      ${(spawnMs / sequentialMs).toFixed(1)}× (target ≥ 30×)`);
    log(`  control pipelined / Python raw  ${(pipelinedMs / python.pipelined_ms).toFixed(2)}× (target ≤ 2×); all in flight ${(deepMs / python.pipelined_ms).toFixed(2)}×`);

    log('event latency: rename-window issued by another client until drover reports %window-renamed');
    const window = session.window.id;
    const watcher = await server.openControl({ session: session.session, output: false });
    connections.push(watcher);
    const events = watcher.subscribe({ kinds: ['window-renamed'] });
    const other = await server.openControl({ session: session.session, output: false });
    connections.push(other);
    const viaControl = await renameLatencies(eventSamples, window, (name) => other.execute(['rename-window', '-t', window, name], { timeoutMs: 10_000 }), events, 'control-');
    const viaSpawn = await renameLatencies(eventSamples, window, (name) => server.run(['rename-window', '-t', window, name]), events, 'spawned-');

    return {
      commands: count,
      spawn_ms_per_command: round(per(spawnMs), 4),
      control_sequential_ms_per_command: round(per(sequentialMs), 4),
      control_pipelined_ms_per_command: round(per(pipelinedMs), 4),
      control_all_in_flight_ms_per_command: round(per(deepMs), 4),
      python_raw_sequential_ms_per_command: round(per(python.sequential_ms), 4),
      python_raw_pipelined_ms_per_command: round(per(python.pipelined_ms), 4),
      spawn_over_control_sequential: round(spawnMs / sequentialMs, 2),
      control_pipelined_over_python_raw_pipelined: round(pipelinedMs / python.pipelined_ms, 2),
      control_all_in_flight_over_python_raw_pipelined: round(deepMs / python.pipelined_ms, 2),
      control_sequential_over_python_raw_sequential: round(sequentialMs / python.sequential_ms, 2),
      rename_event_latency_median_ms: round(median(viaControl)),
      rename_event_latency_from_spawned_client_median_ms: round(median(viaSpawn)),
      event_samples: eventSamples,
    };
  } finally {
    for (const connection of connections) await connection.close().catch(() => undefined);
    await server.close();
  }
}
