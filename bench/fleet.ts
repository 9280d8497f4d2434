/**
 * Fleet messaging under load, on each store side by side: 8 sender processes send 200
 * messages in total (`message send` through the library, each waiting for its own delivery
 * attempt) from the Director to 4 members whose panes run `cat -v` on an owned tmux server.
 * Messages a busy pane lock left pending are delivered afterwards by a `message wait`-style
 * rotation. Before any figure is reported, every message must be persisted, stamped
 * notified_at, and found whole in its member's pane history. The same run goes on SQLite and,
 * where PostgreSQL is installed, on a private cluster started for the bench.
 *
 * A second shape sends the same 200 messages to 4 members that are one real agent each
 * (Claude Code by default; `--agent NAME` picks another, `--agent none` skips the shape), all
 * answering a model mock on 127.0.0.1. A real agent takes a line only between turns, so most
 * lines wait for their member's turn to end and go in by the rotation; the mock's log is the
 * judge: each message's line must arrive there as exactly one user turn.
 *
 * `npm run bench fleet [--agent NAME|none]` runs the whole benchmark; `fleet --sender …` is one
 * sender process.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { LongLivedChild } from '../src/process/index.js';
import { Endpoint, Server } from '../src/tmux/index.js';
import { FleetRuntime, SqlBroker, SqliteStore, createFleetHere, createMember, deliverPending, formatNotificationLine, openBroker, sendAndNotify, type Broker, type Message } from '../src/fleet/index.js';
import { findAgentBinary, startAgentBed, type AgentBed, type AgentName } from '../test/agents/bed.js';
import { PROFILES } from '../test/agents/profiles/index.js';
import { readyBecomes } from '../test/agents/scenario.js';
import { postgresSkipReason, startPostgres } from '../test/support/postgres.js';
import { log, median, percentile, round } from './support.js';

const SENDERS = 8;
const MEMBERS = 4;
const MESSAGES = 200;
/** How long the rotation after the senders may take to deliver what they left pending. */
const DRAIN_DEADLINE_MS = 180_000;
/** Real agents take a line only between turns: their rotation may take longer. */
const AGENT_DRAIN_DEADLINE_MS = 600_000;
/** The pause between two rotations over agents that are all busy (each pass reads every pane). */
const AGENT_ROTATION_PAUSE_MS = 100;
const AGENT_NAMES: readonly AgentName[] = ['claude', 'codex', 'gemini', 'opencode'];
const MAIN = fileURLToPath(new URL('./main.js', import.meta.url));

/** A stored timestamp (`…T09:00:00.123456+00:00`) as epoch microseconds. */
function micros(timestamp: string): number {
  const match = /^(.{19})\.(\d{6})\+00:00$/.exec(timestamp);
  if (!match) throw new Error(`unexpected timestamp ${timestamp}`);
  return Date.parse(`${match[1]}Z`) * 1000 + Number(match[2]);
}

/** One sender process: waits for its stdin to close, then sends its share in order. */
async function sender(args: string[]): Promise<Record<string, number>> {
  const [storeEnvironment, socketPath, from, targets, count, label] = args;
  if (!storeEnvironment || !socketPath || !from || !targets || !count || label === undefined) throw new Error('usage: fleet --sender STORE-ENV-JSON SOCKET FROM TO,TO,… COUNT LABEL');
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  // The store as a member's pane would reach it: the environment the bench's broker gives.
  const broker = await openBroker({ env: JSON.parse(storeEnvironment) as NodeJS.ProcessEnv });
  const runtime = await FleetRuntime.open({ broker, tmuxEndpoint: Endpoint.fromSocketPath(socketPath) });
  const recipients = targets.split(',').map(Number);
  let diagnostics = 0;
  try {
    for (let k = 0; k < Number(count); k += 1) {
      const sent = await sendAndNotify({ ...runtime.notify, from: Number(from), to: recipients[k % recipients.length]!, text: `bench ${label}-${k}` });
      if (sent.diagnostic || sent.failure) diagnostics += 1;
    }
  } finally {
    await runtime.close();
    await broker.close();
  }
  return { sent: Number(count), diagnostics };
}

function echoProgram(dir: string): string {
  const path = join(dir, 'echo-lines');
  writeFileSync(path, '#!/bin/sh\nexec cat -v\n');
  chmodSync(path, 0o755);
  return path;
}

/** Where a run's members live: `cat -v` panes on an owned server, or one real agent each. */
interface MemberWorld {
  readonly server: Server;
  /** The fleet runtime's environment: the Director's pane, and what members' panes get. */
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** The agent each member runs, with the mock that judges arrivals; none for `cat -v`. */
  readonly agent?: { name: AgentName; bed: AgentBed };
  close(): Promise<void>;
}

function withoutTmux(from: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...from };
  delete env.TMUX;
  delete env.TMUX_PANE;
  return env;
}

async function catWorld(dir: string): Promise<MemberWorld> {
  const server = await Server.start({ env: withoutTmux(process.env) });
  try {
    const session = await server.newSession({ name: 'bench', width: 250, height: 60, cwd: dir });
    const director = (await session.listPanes())[0]!.id;
    return { server, env: { PATH: process.env.PATH, HOME: dir, SHELL: echoProgram(dir), TMUX_PANE: director }, cwd: dir, close: () => server.close() };
  } catch (error) {
    await server.close();
    throw error;
  }
}

async function agentWorld(name: AgentName): Promise<MemberWorld> {
  const bed = await startAgentBed(name, { width: 250, height: 60 });
  const director = (await bed.server.snapshot()).panes.toArray()[0]!.paneId as string;
  return { server: bed.server, env: { ...bed.env, TMUX_PANE: director }, cwd: bed.workdir, agent: { name, bed }, close: () => bed.close() };
}

/** Every line the rotation can type for `message`: the first of a hold leads with Escape. */
function linesOf(message: Message): string[] {
  return [formatNotificationLine(message), formatNotificationLine(message, { escapeLead: false })];
}

/** One store's run in one world: `open` gives the bench's broker on a new, empty store in `dir`. */
async function benchmark(label: string, open: (dir: string) => Promise<Broker>, agent: AgentName | undefined): Promise<Record<string, number>> {
  log(`== ${label}`);
  const dir = mkdtempSync(join(tmpdir(), 'drover-bench-fleet-'));
  const world = agent === undefined ? await catWorld(dir) : await agentWorld(agent);
  const { server } = world;
  let broker: Broker | undefined;
  let runtime: FleetRuntime | undefined;
  const senders: LongLivedChild[] = [];
  try {
    broker = await open(dir);
    runtime = await FleetRuntime.open({ broker, env: world.env, tmuxEndpoint: server.endpoint });
    const { fleet, director: directorMember } = await createFleetHere(runtime, { name: 'bench', agent: 'shell' });
    const members: Awaited<ReturnType<typeof createMember>>[] = [];
    for (let i = 0; i < MEMBERS; i += 1) {
      const prompt = world.agent === undefined ? {} : { agent: world.agent.name, prompt: `You are bench member ${i}; reply briefly.` };
      members.push(await createMember(runtime, { fleetId: fleet.fleetId, name: `member-${i}`, cwd: world.cwd, ...prompt }));
    }
    const ids = members.map((member) => member.member.memberId);
    const rotate = async (until: () => Promise<boolean>, deadline: number): Promise<void> => {
      while (!(await until()) && Date.now() < deadline) {
        await Promise.all(ids.map((id) => deliverPending({ ...runtime!.notify, recipientId: id, fleetId: fleet.fleetId })));
        if (world.agent !== undefined) await delay(AGENT_ROTATION_PAUSE_MS);
      }
    };
    if (world.agent !== undefined) {
      // Each agent first takes its member prompt (as a message where its command line takes
      // none) and answers it: only then is its idle composer the one messages go into.
      const mock = world.agent.bed.mock;
      const prompted = async (): Promise<boolean> => members.every((_, i) => mock.turns().some((turn) => turn.text.includes(`You are bench member ${i};`)));
      await rotate(prompted, Date.now() + 120_000);
      if (!(await prompted())) throw new Error(`not every ${world.agent.name} member took its prompt within 2 minutes`);
      for (const member of members) await readyBecomes(world.agent.bed, member.pane, ['ready'], 60_000);
    }

    for (let i = 0; i < SENDERS; i += 1) {
      const rotated = [...ids.slice(i % MEMBERS), ...ids.slice(0, i % MEMBERS)];
      const args = ['fleet', '--sender', JSON.stringify(broker.connectionEnvironment()), server.endpoint.socketPath, String(directorMember.memberId), rotated.join(','), String(MESSAGES / SENDERS), String(i)];
      senders.push(await LongLivedChild.start([process.execPath, MAIN, ...args], { env: withoutTmux(process.env) }));
    }
    const gate = Date.now() * 1000;
    for (const child of senders) child.stdin.end();
    for (const child of senders) {
      const exit = await child.exited;
      if (exit.exitCode !== 0) throw new Error(`a sender failed (${exit.exitCode ?? exit.signal}): ${child.stderr().tail.toString()}`);
    }
    const sendersDone = Date.now() * 1000;
    const sent = async (): Promise<Message[]> => (await Promise.all(ids.map((id) => broker!.pollMessages(id)))).flat().filter((message) => message.text.startsWith('bench '));
    const leftAfterSend = (await sent()).filter((message) => message.notifiedAt === null).length;
    log(`senders done in ${((sendersDone - gate) / 1e6).toFixed(1)} s; ${leftAfterSend} messages left pending ${world.agent === undefined ? 'by busy locks' : 'by busy agents'}`);

    // What the senders could not deliver, as `message wait` would: each member's pane is drained in turn.
    await rotate(async () => (await sent()).every((message) => message.notifiedAt !== null), Date.now() + (world.agent === undefined ? DRAIN_DEADLINE_MS : AGENT_DRAIN_DEADLINE_MS));

    // Correctness first: every message persisted, stamped, and seen whole once where it counts
    // (in its `cat -v` pane's history; by the model mock, as one user turn, for an agent).
    const messages = await sent();
    if (messages.length !== MESSAGES) throw new Error(`correctness check failed: ${messages.length}/${MESSAGES} messages persisted`);
    let delivered: Message[];
    if (world.agent === undefined) {
      const histories = new Map<number, string>();
      for (const member of members) histories.set(member.member.memberId, (await server.pane(member.pane).capture({ start: '-', join: true })).toString('utf8'));
      delivered = messages.filter((message) => message.notifiedAt !== null && histories.get(message.ownerMemberId)!.includes(formatNotificationLine(message)));
    } else {
      // The last lines may still be on their way to the model when their stamps are in.
      const mock = world.agent.bed.mock;
      const arrivals = (message: Message): number => mock.turns().filter((turn) => linesOf(message).includes(turn.text)).length;
      await mock.waitForTurns('every line', () => messages.every((message) => arrivals(message) >= 1), 60_000).catch(() => undefined);
      delivered = messages.filter((message) => message.notifiedAt !== null && arrivals(message) === 1);
    }
    if (delivered.length !== MESSAGES) throw new Error(`correctness check failed: ${delivered.length}/${MESSAGES} messages delivered ${world.agent === undefined ? 'and visible in their panes' : 'to the model exactly once'}`);

    const created = messages.map((message) => micros(message.createdAt));
    const latency = messages.map((message) => (micros(message.notifiedAt!) - micros(message.createdAt)) / 1000);
    const persistSeconds = (Math.max(...created) - gate) / 1e6;
    const lastNotified = Math.max(...messages.map((message) => micros(message.notifiedAt!)));
    const figures = {
      messages_per_s: round(MESSAGES / ((lastNotified - gate) / 1e6), 2),
      messages_persisted_per_second: round(MESSAGES / persistSeconds, 2),
      median_ms: round(median(latency), 1),
      p95_ms: round(percentile(latency, 95), 1),
      persisted: messages.length,
      intact: delivered.length,
      left_pending_by_senders: leftAfterSend,
      senders: SENDERS,
      members: MEMBERS,
    };
    log(`${MESSAGES} messages persisted in ${persistSeconds.toFixed(1)} s (${figures.messages_persisted_per_second}/s) by ${SENDERS} processes to ${MEMBERS} members; all notified at ${figures.messages_per_s}/s`);
    log(`send -> notified_at: median ${figures.median_ms} ms, p95 ${figures.p95_ms} ms`);
    log(`persisted ${figures.persisted}/${MESSAGES}, delivered whole ${figures.intact}/${MESSAGES}`);
    return figures;
  } finally {
    await Promise.all(senders.map((child) => child.stop(100, 'SIGKILL').catch(() => undefined)));
    await runtime?.close();
    await broker?.close();
    await world.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The agent the second shape runs: `--agent NAME`, `--agent none`, else Claude Code when installed. */
function chosenAgent(args: readonly string[]): AgentName | undefined {
  const at = args.indexOf('--agent');
  const asked = at === -1 ? undefined : args[at + 1];
  if (asked === 'none') return undefined;
  if (asked !== undefined && !AGENT_NAMES.includes(asked as AgentName)) throw new Error(`--agent takes one of ${AGENT_NAMES.join(', ')} or none, not ${JSON.stringify(asked)}`);
  const name = (asked ?? 'claude') as AgentName;
  if (findAgentBinary(PROFILES[name]) !== undefined) return name;
  if (asked !== undefined) throw new Error(`${name} is not installed (scripts/install-agents.sh installs the real agents)`);
  log('real agents: skipped (Claude Code is not installed; scripts/install-agents.sh installs it)');
  return undefined;
}

/** Both stores, one after the other, each with both shapes; figures side by side under each run's prefix. */
async function bothStores(args: readonly string[]): Promise<Record<string, number | string>> {
  const agent = chosenAgent(args);
  const figures: Record<string, number | string> = {};
  const add = (prefix: string, run: Record<string, number>): void => {
    for (const [key, value] of Object.entries(run)) figures[`${prefix}_${key}`] = value;
  };
  const sqlite = (dir: string): Promise<Broker> => Promise.resolve(new SqlBroker(SqliteStore.open({ path: join(dir, 'drover.db') })));
  add('sqlite', await benchmark('sqlite, cat -v members', sqlite, undefined));
  if (agent !== undefined) add(`sqlite_${agent}`, await benchmark(`sqlite, ${agent} members`, sqlite, agent));
  const skip = await postgresSkipReason();
  if (skip !== undefined) {
    log(`postgresql: skipped (${skip})`);
    figures.postgres_skipped = skip;
    return figures;
  }
  const cleanups: (() => unknown)[] = [];
  try {
    const cluster = await startPostgres((fn) => cleanups.push(fn));
    const postgres = async (): Promise<Broker> => openBroker({ env: { DROVER_BROKER: await cluster.createDatabase() } });
    add('postgres', await benchmark('postgresql, cat -v members', postgres, undefined));
    if (agent !== undefined) add(`postgres_${agent}`, await benchmark(`postgresql, ${agent} members`, postgres, agent));
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
  return figures;
}

export async function run(args: string[]): Promise<Record<string, number | string>> {
  return args[0] === '--sender' ? sender(args.slice(1)) : bothStores(args);
}
