/**
 * Fleet messaging under load, on each store side by side: 8 sender processes send 200
 * messages in total (`message send` through the library, each waiting for its own delivery
 * attempt) from the Director to 4 members whose panes run `cat -v` on an owned tmux server.
 * Messages a busy pane lock left pending are delivered afterwards by a `message wait`-style
 * rotation. Before any figure is reported, every message must be persisted, stamped
 * notified_at, and found whole in its member's pane history. The same run goes on SQLite and,
 * where PostgreSQL is installed, on a private cluster started for the bench.
 *
 * `npm run bench fleet` runs the whole benchmark; `fleet --sender …` is one sender process.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LongLivedChild } from '../src/process/index.js';
import { Endpoint, Server } from '../src/tmux/index.js';
import { FleetRuntime, SqlBroker, SqliteStore, createFleetHere, createMember, deliverPending, formatNotificationLine, openBroker, sendAndNotify, type Broker, type Message } from '../src/fleet/index.js';
import { postgresSkipReason, startPostgres } from '../test/support/postgres.js';
import { log, median, percentile, round } from './support.js';

const SENDERS = 8;
const MEMBERS = 4;
const MESSAGES = 200;
/** How long the rotation after the senders may take to deliver what they left pending. */
const DRAIN_DEADLINE_MS = 180_000;
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

/** One store's run: `open` gives the bench's broker on a new, empty store in `dir`. */
async function benchmark(kind: string, open: (dir: string) => Promise<Broker>): Promise<Record<string, number>> {
  log(`== ${kind}`);
  const dir = mkdtempSync(join(tmpdir(), 'drover-bench-fleet-'));
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  const server = await Server.start({ env });
  const broker = await open(dir);
  let runtime: FleetRuntime | undefined;
  const senders: LongLivedChild[] = [];
  try {
    const session = await server.newSession({ name: 'bench', width: 250, height: 60, cwd: dir });
    const director = (await session.listPanes())[0]!.id;
    runtime = await FleetRuntime.open({ broker, env: { PATH: process.env.PATH, HOME: dir, SHELL: echoProgram(dir), TMUX_PANE: director }, tmuxEndpoint: server.endpoint });
    const { fleet, director: directorMember } = await createFleetHere(runtime, { name: 'bench', agent: 'shell' });
    const members = [];
    for (let i = 0; i < MEMBERS; i += 1) members.push(await createMember(runtime, { fleetId: fleet.fleetId, name: `member-${i}`, cwd: dir }));
    const ids = members.map((member) => member.member.memberId);

    for (let i = 0; i < SENDERS; i += 1) {
      const rotated = [...ids.slice(i % MEMBERS), ...ids.slice(0, i % MEMBERS)];
      const args = ['fleet', '--sender', JSON.stringify(broker.connectionEnvironment()), server.endpoint.socketPath, String(directorMember.memberId), rotated.join(','), String(MESSAGES / SENDERS), String(i)];
      senders.push(await LongLivedChild.start([process.execPath, MAIN, ...args], { env }));
    }
    const gate = Date.now() * 1000;
    for (const child of senders) child.stdin.end();
    for (const child of senders) {
      const exit = await child.exited;
      if (exit.exitCode !== 0) throw new Error(`a sender failed (${exit.exitCode ?? exit.signal}): ${child.stderr().tail.toString()}`);
    }
    const sendersDone = Date.now() * 1000;
    const sent = async (): Promise<Message[]> => (await Promise.all(ids.map((id) => broker.pollMessages(id)))).flat().filter((message) => message.text.startsWith('bench '));
    const leftAfterSend = (await sent()).filter((message) => message.notifiedAt === null).length;
    log(`senders done in ${((sendersDone - gate) / 1e6).toFixed(1)} s; ${leftAfterSend} messages left pending by busy locks`);

    // What the senders could not deliver, as `message wait` would: each member's pane is drained in turn.
    const drainUntil = Date.now() + DRAIN_DEADLINE_MS;
    while ((await sent()).some((message) => message.notifiedAt === null) && Date.now() < drainUntil) {
      await Promise.all(ids.map((id) => deliverPending({ ...runtime!.notify, recipientId: id, fleetId: fleet.fleetId })));
    }

    // Correctness first: every message persisted, stamped and visible, whole, in its pane.
    const messages = await sent();
    if (messages.length !== MESSAGES) throw new Error(`correctness check failed: ${messages.length}/${MESSAGES} messages persisted`);
    const histories = new Map<number, string>();
    for (const member of members) histories.set(member.member.memberId, (await server.pane(member.pane).capture({ start: '-', join: true })).toString('utf8'));
    const delivered = messages.filter((message) => message.notifiedAt !== null && histories.get(message.ownerMemberId)!.includes(formatNotificationLine(message)));
    if (delivered.length !== MESSAGES) throw new Error(`correctness check failed: ${delivered.length}/${MESSAGES} messages delivered and visible in their panes`);

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
    log(`persisted ${figures.persisted}/${MESSAGES}, delivered whole and visible ${figures.intact}/${MESSAGES}`);
    return figures;
  } finally {
    await Promise.all(senders.map((child) => child.stop(100, 'SIGKILL').catch(() => undefined)));
    await runtime?.close();
    await broker.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Both stores, one after the other, their figures side by side under each store's prefix. */
async function bothStores(): Promise<Record<string, number | string>> {
  const sqlite = await benchmark('sqlite', (dir) => Promise.resolve(new SqlBroker(SqliteStore.open({ path: join(dir, 'drover.db') }))));
  const figures: Record<string, number | string> = {};
  const add = (prefix: string, run: Record<string, number>): void => {
    for (const [key, value] of Object.entries(run)) figures[`${prefix}_${key}`] = value;
  };
  add('sqlite', sqlite);
  const skip = await postgresSkipReason();
  if (skip !== undefined) {
    log(`postgresql: skipped (${skip})`);
    figures.postgres_skipped = skip;
    return figures;
  }
  const cleanups: (() => unknown)[] = [];
  try {
    const cluster = await startPostgres((fn) => cleanups.push(fn));
    add('postgres', await benchmark('postgresql', async () => openBroker({ env: { DROVER_BROKER: await cluster.createDatabase() } })));
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
  return figures;
}

export async function run(args: string[]): Promise<Record<string, number | string>> {
  return args[0] === '--sender' ? sender(args.slice(1)) : bothStores();
}
