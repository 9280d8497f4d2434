import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { LongLivedChild } from '../../src/process/index.js';
import { PostgresStore, SqlBroker, SqliteStore, createMember, shellPromptLine, type Message } from '../../src/fleet/index.js';
import { postgresSkipReason, startPostgres, type PostgresCluster } from '../support/postgres.js';
import { eventually } from '../support/wait.js';
import { echoRunning, paneHistory, tempDirectory, tmuxFleet, type TmuxFleet } from './support.js';

const FAULT_CHILD = fileURLToPath(new URL('../fixtures/fleet/fault-child.js', import.meta.url));
const MEMBERS = 3;
const SENDERS = 3;
const PER_SENDER = 20;
/** Messages stored before the dispatcher starts. */
const DISPATCHED = 60;
/** How long a whole run (cold node starts, a drain) may take on a loaded two-core machine. */
const RUN_TIMEOUT_MS = 120_000;

interface Load {
  s: TmuxFleet;
  members: { memberId: number; pane: string }[];
  /** What a fault child needs to reach this fleet's store and pane locks. */
  env: NodeJS.ProcessEnv;
}

/** A fleet on real tmux with MEMBERS `cat -v` members, on SQLite (no cluster) or on a database of `cluster`. */
async function loadFleet(t: { after(fn: () => unknown): void }, cluster: PostgresCluster | undefined): Promise<Load> {
  const dir = tempDirectory(t);
  const store = cluster ? await PostgresStore.open({ url: await cluster.createDatabase() }) : SqliteStore.open({ path: join(dir, 'drover.db') });
  const broker = new SqlBroker(store);
  t.after(() => broker.close());
  const s = await tmuxFleet(t, { broker });
  const members = [];
  for (let i = 0; i < MEMBERS; i += 1) {
    const created = await createMember(s.runtime, { fleetId: s.fleetId, name: `member-${i}`, cwd: s.dir });
    await echoRunning(s.server, created.pane);
    members.push({ memberId: created.member.memberId, pane: created.pane });
  }
  return { s, members, env: { PATH: process.env.PATH, HOME: s.dir, ...s.runtime.memberEnvironment() } };
}

/** A fault child started behind its gate; killed with SIGKILL after the test whatever happened. */
async function faultChild(t: { after(fn: () => unknown): void }, load: Load, args: string[]): Promise<LongLivedChild> {
  const child = await LongLivedChild.start([process.execPath, FAULT_CHILD, load.s.server.endpoint.socketPath, ...args], { env: load.env });
  t.after(() => child.stop(100, 'SIGKILL'));
  return child;
}

interface SendReport {
  key: string;
  message_id: number;
  notified: boolean;
  /** The message a notification failure named, if any. */
  diagnostic: number | null;
}

/** A sender's reports, one per send, as they come. */
function sendReports(child: LongLivedChild): { lines(): SendReport[] } {
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { lines: () => text.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as SendReport) };
}

async function exitsCleanly(child: LongLivedChild, what: string): Promise<void> {
  const exit = await child.exited;
  assert.equal(exit.exitCode, 0, `${what} failed (${exit.exitCode ?? exit.signal}): ${child.stderr().tail.toString()}`);
}

/** Every message addressed to the load's members. */
async function stored(load: Load): Promise<Message[]> {
  return (await Promise.all(load.members.map((member) => load.s.broker.pollMessages(member.memberId)))).flat().filter((message) => message.text.startsWith('fault '));
}

async function killWhenNotified(load: Load, child: LongLivedChild, atLeast: number): Promise<void> {
  await eventually(`${atLeast} messages notified`, async () => (await stored(load)).filter((message) => message.notifiedAt !== null).length >= atLeast, RUN_TIMEOUT_MS);
  process.kill(child.pid, 'SIGKILL');
  assert.equal((await child.exited).signal, 'SIGKILL');
}

/**
 * 0 lost, 0 duplicated: each of `texts` stored once, stamped notified, and typed once and
 * submitted once into its member's pane (`cat -v` under the terminal's echo shows a line
 * twice: the echo as it is typed, cat's copy once it is submitted).
 */
async function deliveredExactlyOnce(load: Load, texts: string[]): Promise<void> {
  const messages = await stored(load);
  assert.deepEqual(messages.map((message) => message.text).sort(), [...texts].sort(), 'every message stored, none twice');
  const pending = messages.filter((message) => message.notifiedAt === null).map((message) => message.messageId);
  assert.deepEqual(pending, [], 'every message notified');
  const paneOf = new Map(load.members.map((member) => [member.memberId, member.pane]));
  const counts = async (): Promise<{ message: number; shown: number }[]> => {
    const histories = new Map<string, string>();
    for (const member of load.members) histories.set(member.pane, await paneHistory(load.s.server, member.pane));
    return messages.map((message) => ({ message: message.messageId, shown: histories.get(paneOf.get(message.ownerMemberId)!)!.split(shellPromptLine(message, { escapeLead: true })).length - 1 }));
  };
  // Enter was the last key of the last delivery: cat's copy shows a moment later.
  await eventually("the last lines' copies to show", async () => (await counts()).every((entry) => entry.shown >= 2));
  const wrong = (await counts()).filter((entry) => entry.shown !== 2);
  assert.deepEqual(wrong, [], 'each line shown exactly twice in its pane: typed once, submitted once');
}

function faultRuns(storeName: string, cluster: () => Promise<PostgresCluster> | undefined): void {
  it(`${storeName}: a sender killed with SIGKILL mid-load loses nothing and duplicates nothing; resent with its keys, all arrive once`, { timeout: RUN_TIMEOUT_MS * 2 }, async (t) => {
    const load = await loadFleet(t, await cluster());
    const ids = load.members.map((member) => member.memberId);
    const args = (sender: number): string[] => ['send', String(load.s.directorId), [...ids.slice(sender), ...ids.slice(0, sender)].join(','), String(PER_SENDER), `s${sender}`];
    const senders = await Promise.all(Array.from({ length: SENDERS }, (_, sender) => faultChild(t, load, args(sender))));
    const reports = senders.map((child) => sendReports(child));
    for (const child of senders) child.stdin.end();
    await killWhenNotified(load, senders[0]!, PER_SENDER / 2);
    for (const child of senders.slice(1)) await exitsCleanly(child, 'a sender');

    // What the survivors left pending, each said so by a diagnostic; the killed sender's own may say nothing.
    const diagnosed = new Set(reports.slice(1).flatMap((report) => report.lines().flatMap((line) => (line.diagnostic === null ? [] : [line.diagnostic]))));
    const undiagnosed = (await stored(load)).filter((message) => message.notifiedAt === null && !message.text.startsWith('fault s0-') && !diagnosed.has(message.messageId));
    assert.deepEqual(undiagnosed.map((message) => message.text), [], 'every message a surviving sender left pending has a diagnostic');
    const resent = await faultChild(t, load, args(0));
    resent.stdin.end();
    await exitsCleanly(resent, 'the resent sender');

    const dispatcher = await faultChild(t, load, ['dispatch', String(load.s.fleetId)]);
    dispatcher.stdin.end();
    await exitsCleanly(dispatcher, 'the dispatcher');
    await deliveredExactlyOnce(
      load,
      Array.from({ length: SENDERS * PER_SENDER }, (_, n) => `fault s${Math.floor(n / PER_SENDER)}-${n % PER_SENDER}`),
    );
  });

  it(`${storeName}: a dispatcher killed with SIGKILL mid-load leaves the rest pending; a restarted one delivers each once`, { timeout: RUN_TIMEOUT_MS * 2 }, async (t) => {
    const load = await loadFleet(t, await cluster());
    const texts = Array.from({ length: DISPATCHED }, (_, n) => `fault d-${n}`);
    for (const [n, text] of texts.entries()) await load.s.broker.sendMessage({ from: load.s.directorId, to: load.members[n % MEMBERS]!.memberId, text });
    const first = await faultChild(t, load, ['dispatch', String(load.s.fleetId)]);
    first.stdin.end();
    await killWhenNotified(load, first, DISPATCHED / 3);

    const left = (await stored(load)).filter((message) => message.notifiedAt === null);
    assert.ok(left.length > 0, 'the kill came mid-load: messages were left pending');
    const restarted = await faultChild(t, load, ['dispatch', String(load.s.fleetId)]);
    restarted.stdin.end();
    await exitsCleanly(restarted, 'the restarted dispatcher');
    await deliveredExactlyOnce(load, texts);
  });
}

// One at a time: the children's deliveries must fit their five-second input budgets.
describe('fleet processes killed with SIGKILL mid-load, into real tmux', { concurrency: 1 }, () => {
  faultRuns('SQLite', () => undefined);
});

const skip = await postgresSkipReason();
describe('fleet processes killed with SIGKILL mid-load on PostgreSQL, into real tmux', { skip, concurrency: 1 }, () => {
  const cluster = skip === undefined ? startPostgres(after) : undefined;
  faultRuns('PostgreSQL', () => cluster);
});
