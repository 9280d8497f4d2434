import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentScreen, procLookup, type AgentScreen, type AgentScreenRules, type ScreenPhase } from '../../src/agents/index.js';
import { DroverError, TimeoutError } from '../../src/process/index.js';
import type { MuxScreen } from '../../src/mux/index.js';
import { foregroundProgram } from '../../src/panes/index.js';
import type { Server } from '../../src/tmux/index.js';
import {
  FleetRuntime,
  PaneLocks,
  SqlBroker,
  SqliteStore,
  paneLockDirectory,
  type Broker,
  TerminationSpans,
  createFleetHere,
  type Clock,
  type CodingAgent,
  type PaneInput,
  type PortOpener,
  type SignalHost,
} from '../../src/fleet/index.js';
import { startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

/** A fresh directory removed by the returned cleanup, even when the test fails. */
export function tempDirectory(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'drover-fleet-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Microsecond wall clock that ticks one millisecond per read, so ordering is deterministic. */
export function steppingWallClock(start = Date.UTC(2026, 9, 24, 9, 0, 0) * 1000): () => number {
  let now = start;
  return () => (now += 1000);
}

/**
 * A microsecond wall clock a test steers: each read ticks one millisecond, unless `frozen`
 * holds it at `micros` (the last time read, or one the test set).
 */
export class TestWall {
  micros = Date.UTC(2026, 9, 24, 9, 0, 0) * 1000;
  frozen = false;
  readonly read = (): number => (this.frozen ? this.micros : (this.micros += 1000));
}

export interface Fixture {
  dir: string;
  store: SqliteStore;
  broker: SqlBroker;
  locks: PaneLocks;
}

/** A fresh SQLite store in a fresh directory, its broker on a stepping clock, and the pane locks beside it. */
export function openFixture(t: { after(fn: () => unknown): void }): Fixture {
  const dir = tempDirectory(t);
  const store = SqliteStore.open({ path: join(dir, 'drover.db') });
  t.after(() => store.close());
  return { dir, store, broker: new SqlBroker(store, { wallMicros: steppingWallClock() }), locks: new PaneLocks(paneLockDirectory(store.path)) };
}

/**
 * A fleet with its director in %0 and two ordinary members in %1 and %2. The members run plain
 * shells unless `agent` says otherwise: a shell gets the keystroke choreography, a coding
 * agent the screen-evidence one.
 */
export async function seedFleet(broker: Broker, session = 's1', agent: CodingAgent = 'shell') {
  const { fleet, director } = await broker.createFleet({ name: 'team', codingAgent: agent, directorPlacement: { backend: 'tmux', session, window: '@1', pane: '%0' } });
  const alice = await broker.registerMember({ fleetId: fleet.fleetId, name: 'alice', codingAgent: agent, placement: { backend: 'tmux', session, window: '@1' } });
  await broker.recordPane(alice.memberId, '%1');
  const bob = await broker.registerMember({ fleetId: fleet.fleetId, name: 'bob', codingAgent: agent, placement: { backend: 'tmux', session, window: '@1' } });
  await broker.recordPane(bob.memberId, '%2');
  return { fleet, director, alice: await broker.getMember(alice.memberId), bob: await broker.getMember(bob.memberId) };
}

/** Time that moves only when someone sleeps or advances it. */
export class FakeClock implements Clock {
  time = 1_000_000;
  readonly sleeps: number[] = [];

  now(): number {
    return this.time;
  }

  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.time += Math.max(0, ms);
    return Promise.resolve();
  }

  advance(ms: number): void {
    this.time += ms;
  }
}

export interface PortCall {
  op: 'escape' | 'literal' | 'enter' | 'read' | 'grid' | 'paste' | 'keys';
  pane: string;
  text?: string;
  /** What was left of the step's deadline when the call started. */
  timeoutMs: number;
  at: number;
}

type Step = PortCall['op'];

/**
 * A multiplexer's panes as submissions reach them (PaneInput), recording every call with the
 * fake time it started and what was left of its step's deadline, taking `costMs` of fake time
 * per call, and failing the calls it is told to. Like the real channel, a call whose deadline
 * has passed sends nothing and throws. Escape and Enter on their own are recorded as such;
 * other keys as `keys`.
 */
export class FakePort {
  readonly calls: PortCall[] = [];
  costMs = 10;
  /** The multiplexer takes a bracketed paste. */
  pastes = true;
  private readonly failures: { op: Step; nth: number; error: Error }[] = [];
  private readonly counts: Record<Step, number> = { escape: 0, literal: 0, enter: 0, read: 0, grid: 0, paste: 0, keys: 0 };
  /**
   * The agent behind the pane, for members whose coding agent is read off its screen: it
   * shows its composer, takes pastes and turns busy on Enter for `busyReads` reads.
   */
  readonly agent = new ScreenAgent();
  /** The pane's foreground program, as the multiplexer names it: not a shell, so a plain member's line leads with Escape. */
  foreground = 'node';
  /** Runs (and is awaited) as each call starts, before the call succeeds or fails. */
  onCall: ((call: PortCall) => void | Promise<void>) | undefined;
  /** Replaces every screen read (a pane that is gone, say). */
  readScreen: ((pane: string) => Promise<AgentScreen>) | undefined;
  /** Rows that scrolled off the top of the screen, oldest first: a grid read returns them above the screen's. */
  scrollback: string[] = [];

  constructor(private readonly clock: FakeClock) {}

  /** Fail the nth (1-based) call of `op` with `error`. */
  failOn(op: Step, error: Error, nth = 1): this {
    this.failures.push({ op, nth, error });
    return this;
  }

  /** Opens a placement's pane: every member's pane is this one fake multiplexer's. */
  readonly open: PortOpener = (placement) => Promise.resolve(this.input(placement.pane));

  input(pane: string): PaneInput {
    return {
      pane,
      pastes: this.pastes,
      channel: (deadline) => {
        const record = async (op: Step, text?: string): Promise<void> => {
          const timeoutMs = deadline - this.clock.now();
          if (timeoutMs <= 0) throw new TimeoutError('the operation used up its time budget', 0, { phase: 'admit', delivery: 'not_sent' });
          const call: PortCall = { op, pane, timeoutMs, at: this.clock.now(), ...(text === undefined ? {} : { text }) };
          this.calls.push(call);
          this.counts[op] += 1;
          const nth = this.counts[op];
          await this.onCall?.(call);
          this.clock.advance(this.costMs);
          const failure = this.failures.find((f) => f.op === op && f.nth === nth);
          if (failure) throw failure.error;
        };
        const screen = async (): Promise<AgentScreen> => (this.readScreen === undefined ? this.agent.screen() : await this.readScreen(pane));
        return {
          read: async () => {
            await record('read');
            return { paneId: pane, ...(await screen()) };
          },
          grid: async () => {
            await record('grid');
            return { paneId: pane, text: [...this.scrollback, ...(await screen()).lines].join('\n'), truncated: false, revision: String(this.calls.length) };
          },
          // Asking what runs is no input: not recorded, and it takes no fake time.
          process: () => Promise.resolve({ paneId: pane, pid: null, foreground: this.foreground, dead: false, exitStatus: null }),
          type: (text) => record('literal', text),
          paste: async (text) => {
            await record('paste', text);
            this.agent.paste(text);
          },
          keys: async (keys) => {
            const alone = keys.length === 1 && (keys[0] === 'Escape' || keys[0] === 'Enter') ? (keys[0] === 'Escape' ? 'escape' : 'enter') : undefined;
            await record(alone ?? 'keys', alone === undefined ? keys.join(' ') : undefined);
            this.agent.keys(keys);
          },
        };
      },
    };
  }

  /** The calls that put something into the pane (screen and scrollback reads left out). */
  get inputs(): PortCall[] {
    return this.calls.filter((call) => call.op !== 'read' && call.op !== 'grid');
  }

  get pasted(): string[] {
    return this.calls.filter((call) => call.op === 'paste').map((call) => call.text!);
  }

  get literals(): string[] {
    return this.calls.filter((call) => call.op === 'literal').map((call) => call.text!);
  }
}

/**
 * A coding agent as its screen shows it: the state is drawn on three lines that the
 * `screenAgentRules` read back, so fleet tests exercise the choreography's decisions only.
 */
export class ScreenAgent {
  phase: ScreenPhase = 'composer';
  composer = '';
  /** Reads a turn stays busy after Enter (0: the turn never ends). */
  busyReads = 3;
  /** Pastes never reach the composer (keys lost on the way). */
  ignorePaste = false;
  private busyLeft = 0;
  readonly submitted: string[] = [];

  screen(): AgentScreen {
    if (this.phase === 'busy' && this.busyLeft > 0 && --this.busyLeft === 0) this.phase = 'composer';
    return agentScreen(`phase ${this.phase}\ncomposer ${JSON.stringify(this.composer)}`, { width: 80, height: 2, cursor: null });
  }

  paste(text: string): void {
    if (this.phase === 'composer' && !this.ignorePaste) this.composer += text;
  }

  keys(keys: readonly string[]): void {
    for (const key of keys) {
      if (key === 'ctrl+u') this.composer = '';
      if (key === 'Enter' && this.phase === 'composer' && this.composer !== '') {
        this.submitted.push(this.composer);
        this.composer = '';
        this.phase = 'busy';
        this.busyLeft = this.busyReads;
      }
    }
  }
}

export const screenAgentRules: AgentScreenRules = {
  agent: 'claude',
  read(screen) {
    const phase = screen.lines[0]!.slice('phase '.length) as ScreenPhase;
    return {
      phase,
      rule: `test.${phase}`,
      detail: `the test agent is ${phase}`,
      composer: phase === 'composer' || phase === 'busy' ? { text: JSON.parse(screen.lines[1]!.slice('composer '.length)) as string } : null,
      completion: false,
      question: null,
    };
  },
  composerShows: (shown, typed) => shown === typed,
  clearKeys: ['ctrl+u'],
  dismissCompletionKeys: ['Escape'],
};

/**
 * A plain-shell member's pane that hands each keystroke (Escape, the literal line, Enter) to
 * `keystroke`: its screen stays blank and it is never pasted into.
 */
export function keystrokeInput(pane: string, keystroke: (op: 'escape' | 'literal' | 'enter', text?: string) => Promise<void>): PaneInput {
  const unused = (what: string) => () => Promise.reject(new Error(`a shell member's pane is never ${what}`));
  // A pane that draws nothing: no line shows in it, so every settle waits out its bound.
  const blank: MuxScreen = { paneId: pane, rows: Array.from({ length: 24 }, () => []), lines: Array.from({ length: 24 }, () => ''), width: 80, height: 24, cursor: { x: 0, y: 0, visible: true } };
  return {
    pane,
    pastes: true,
    channel: () => ({
      read: () => Promise.resolve(blank),
      grid: () => Promise.resolve({ paneId: pane, text: '', truncated: false, revision: '0' }),
      // A program that is not a shell: its lines lead with Escape.
      process: () => Promise.resolve({ paneId: pane, pid: null, foreground: 'node', dead: false, exitStatus: null }),
      paste: unused('pasted into'),
      type: (text) => keystroke('literal', text),
      keys: (keys) => (keys.length === 1 && keys[0] === 'Escape' ? keystroke('escape') : keys.length === 1 && keys[0] === 'Enter' ? keystroke('enter') : unused('sent named keys')()),
    }),
  };
}

/** A port error that says nothing was typed (launch failure, pane gone). */
export function notSentError(message = 'pane %9 not found'): DroverError {
  return new DroverError(message, { phase: 'command', delivery: 'not_sent' });
}

/** A signal host that records listeners and kills instead of touching this process. */
export class FakeSignalHost implements SignalHost {
  readonly pid = 4242;
  readonly listeners = new Map<NodeJS.Signals, Set<(signal: NodeJS.Signals) => void>>();
  readonly kills: { pid: number; signal: NodeJS.Signals }[] = [];
  onKill: ((signal: NodeJS.Signals) => void) | undefined;

  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): void {
    if (!this.listeners.has(signal)) this.listeners.set(signal, new Set());
    this.listeners.get(signal)!.add(listener);
  }

  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): void {
    this.listeners.get(signal)?.delete(listener);
  }

  kill(pid: number, signal: NodeJS.Signals): void {
    this.kills.push({ pid, signal });
    this.onKill?.(signal);
  }

  raise(signal: NodeJS.Signals): void {
    for (const listener of this.listeners.get(signal) ?? []) listener(signal);
  }

  listening(signal: NodeJS.Signals): number {
    return this.listeners.get(signal)?.size ?? 0;
  }
}

export function fakeSpans(): { host: FakeSignalHost; spans: TerminationSpans } {
  const host = new FakeSignalHost();
  return { host, spans: new TerminationSpans(host) };
}

/** The fake agent TUI from the pane-verbs fixtures, compiled next to this file's tree. */
export const FAKE_AGENT = fileURLToPath(new URL('../fixtures/fake-agent.js', import.meta.url));

/** An executable /bin/sh script: the program a `shell` member pane runs when $SHELL names it. */
export function paneProgram(dir: string, name: string, command: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\nexec ${command}\n`);
  chmodSync(path, 0o755);
  return path;
}

/**
 * Prints the database the pane was given, then `cat -v`: every submitted line is echoed
 * visibly (an Escape shows as ^[), so a pane's history shows which lines arrived, in order.
 */
export function echoProgram(dir: string): string {
  return paneProgram(dir, 'echo-lines', `sh -c 'echo "drover db: $DROVER_DB"; exec cat -v'`);
}

/**
 * Waits until cat reads a member pane running echoProgram. Until then the pane's foreground is
 * the shell tmux starts it with, which a delivery takes for a shell at its prompt and types into
 * without Escape: a test that compares whole lines must not meet that moment.
 */
export async function echoRunning(server: Server, pane: string): Promise<void> {
  await eventually(`cat to read pane ${pane}`, async () => {
    const record = (await server.snapshot()).pane(pane as `%${number}`);
    const pid = record?.panePid;
    return typeof pid === 'number' && foregroundProgram({ pid, foreground: record?.paneCurrentCommand ?? '' }, procLookup()) === 'cat';
  });
}

export interface TmuxFleet extends Fixture {
  server: Server;
  /** The session's first pane: the Director. */
  director: string;
  runtime: FleetRuntime;
  fleetId: number;
  directorId: number;
}

/**
 * An owned tmux server (200x50 session) whose first pane is the Director of a fresh fleet in a
 * fresh database, and a runtime on it whose shell agent runs `shell` (default: echoProgram).
 * Everything is torn down after the test.
 */
export async function tmuxFleet(t: { after(fn: () => unknown): void }, options: { shell?: string; broker?: SqlBroker } = {}): Promise<TmuxFleet> {
  const fixture = openFixture(t);
  const server = await startTestServer();
  t.after(() => server.close());
  const session = await server.newSession({ name: 'fleet', width: 200, height: 50, cwd: fixture.dir });
  const director = (await session.listPanes())[0]!.id;
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: fixture.dir, SHELL: options.shell ?? echoProgram(fixture.dir), TMUX_PANE: director };
  const broker = options.broker ?? fixture.broker;
  const runtime = await FleetRuntime.open({ broker, env, tmuxEndpoint: server.endpoint });
  t.after(() => runtime.close());
  const { fleet, director: member } = await createFleetHere(runtime, { name: 'team', agent: 'shell' });
  return { ...fixture, broker, server, director, runtime, fleetId: fleet.fleetId, directorId: member.memberId };
}

/** A pane's whole history with wrapped lines joined: every line it ever showed. */
export async function paneHistory(server: Server, pane: string): Promise<string> {
  return (await server.pane(pane).capture({ start: '-', join: true })).toString('utf8');
}
