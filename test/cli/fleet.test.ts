import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { LongLivedChild, type RunResult } from '../../src/process/index.js';
import { HerdrClient } from '../../src/mux/index.js';
import { PaneLocks, SqliteStore, paneLockDirectory, paneLockKey } from '../../src/fleet/index.js';
import { openPaths } from '../support/proc.js';
import { eventually } from '../support/wait.js';
import { incarnationKey, type Server } from '../../src/tmux/index.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { startTestServer } from '../support/tmux.js';
import { FakeHerdrServer } from '../fixtures/herdr/server.js';
import { echoProgram } from '../fleet/support.js';

/** Variables that would send the CLI to another multiplexer than the one a test sets up. */
const NO_MUX = { DROVER_MUX: '', HERDR_ENV: '', HERDR_PANE_ID: '', HERDR_SOCKET_PATH: '', DROVER_MUX_ENDPOINT_TMUX: '', DROVER_MAX_TEXT_LEN: '' };

function json<T>(result: RunResult): T {
  assert.equal(result.exitCode, 0, `exit ${result.exitCode}: ${result.stderrText()}`);
  return JSON.parse(result.text()) as T;
}

function ok(result: RunResult): string {
  assert.equal(result.exitCode, 0, `exit ${result.exitCode}: ${result.stderrText()}`);
  return result.text();
}

function failed(result: RunResult, code: number, message: RegExp): void {
  assert.equal(result.exitCode, code, `expected exit ${code}, got ${result.exitCode}: ${result.stderrText()}`);
  assert.match(result.stderrText(), message);
}

/** Lines of a child's stdout, awaited one by one. */
function lines(stream: Readable): () => Promise<string> {
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffer = '';
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else queue.push(line);
    }
  });
  return () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve)));
}

interface MessageJson {
  message_id: number;
  from_member_id: number;
  to_member_id: number | null;
  text: string;
  status_state: string;
  notified_at: string | null;
}

describe('drover fleet / member / message on tmux', () => {
  const sandbox = cliSandbox();
  let server: Server;
  let env: NodeJS.ProcessEnv;
  const drover = (args: readonly string[], extra: NodeJS.ProcessEnv = {}) => sandbox.drover(args, { env: { ...env, ...extra } });

  before(async () => {
    server = await startTestServer();
    const session = await server.newSession({ name: 'fleet', width: 200, height: 50, cwd: sandbox.dir });
    const director = (await session.listPanes())[0]!.id;
    env = { ...NO_MUX, TMUX: `${server.endpoint.socketPath},0,0`, TMUX_PANE: director, SHELL: echoProgram(sandbox.dir) };
  });
  after(() => server.close());

  it('runs a fleet from the Director pane: create, members, messages, capture, delete', async () => {
    const created = json<{
      fleet: { fleet_id: number; name: string; director_member_id: number };
      director: { member_id: number; kind: string; placement: { backend: string; pane_id: string; pane_key: string; server: string } };
    }>(await drover(['fleet', 'create', 'team', '--agent', 'shell', '--json']));
    assert.equal(created.fleet.name, 'team');
    assert.equal(created.director.kind, 'director');
    assert.deepEqual([created.director.placement.backend, created.director.placement.pane_id], ['tmux', env.TMUX_PANE]);
    const incarnation = incarnationKey(await server.incarnation());
    assert.equal(created.director.placement.server, incarnation, "the placement names the server's run");
    assert.equal(created.director.placement.pane_key, `local::tmux::${incarnation}::${env.TMUX_PANE}`, 'a pane id comes with its pane key');
    const fleet = String(created.fleet.fleet_id);
    const director = String(created.director.member_id);

    assert.match(ok(await drover(['member', 'create', '--fleet', fleet, '--name', 'alice', '--description', 'writes the code'])), /^\d+ alice agent=shell pane=%\d+\n$/);
    const bob = json<{ member: { member_id: number; placement: { pane_id: string; pane_key: string } } }>(await drover(['member', 'create', '--fleet', fleet, '--name', 'bob', '--json'])).member;
    assert.equal(bob.placement.pane_key, `local::tmux::${incarnation}::${bob.placement.pane_id}`);
    const bobId = String(bob.member_id);

    const roster = ok(await drover(['member', 'list', '--fleet', fleet]));
    assert.match(roster, /^member_id\s+name\s+kind\s+agent\s+backend\s+pane\n/);
    assert.match(roster, /\n\d+\s+Director\s+director\s+shell\s+tmux\s+%\d+\n/);
    assert.match(roster, new RegExp(`\\n${bobId}\\s+bob\\s+member\\s+shell\\s+tmux\\s+${bob.placement.pane_id}\\n`));
    const listed = json<{ name: string; last_sent: string | null }[]>(await drover(['member', 'list', '--fleet', fleet, '--json']));
    assert.deepEqual(
      listed.map((m) => m.name),
      ['Director', 'alice', 'bob'],
    );

    const sent = json<{ message: MessageJson; notification_sent: boolean }>(await drover(['message', 'send', '--from', director, '--to', bobId, 'please review the parser', '--json']));
    assert.equal(sent.notification_sent, true);
    assert.equal(sent.message.text, 'please review the parser');
    const report = ok(await drover(['message', 'send', '--from', bobId, '--to', director, 'parser looks fine']));
    assert.match(report, /^sent \d+ from=\d+ to=\d+ \S+ input_required parser looks fine\n$/, 'the Director gets no pane input');
    assert.match(ok(await drover(['message', 'send', '--from', director, '--broadcast', 'standup in five'])), /^broadcast id=\d+ recipients=2 delivered=2\n$/);

    const polled = ok(await drover(['message', 'poll', '--member', bobId], { DROVER_MAX_TEXT_LEN: '6' }));
    assert.match(polled, /input_required notified standu…\n/);
    assert.match(polled, /input_required notified please…\n/);
    const inbox = json<MessageJson[]>(await drover(['message', 'poll', '--member', bobId, '--json'], { DROVER_MAX_TEXT_LEN: '6' }));
    assert.deepEqual(
      inbox.map((m) => m.text),
      ['standup in five', 'please review the parser'],
      'JSON is never truncated, newest first',
    );
    const first = String(sent.message.message_id);
    assert.equal(json<MessageJson>(await drover(['message', 'ack', '--member', bobId, first, '--json'])).status_state, 'completed');
    failed(await drover(['message', 'ack', '--member', bobId, first]), 1, /Cannot ACK message in state completed/);
    assert.ok(json<MessageJson>(await drover(['message', 'show', first, '--json'])).notified_at);

    const waited = json<{ messages: MessageJson[]; timed_out: boolean }>(await drover(['message', 'wait', '--member', director, '--timeout-ms', '5000', '--json']));
    assert.deepEqual([waited.timed_out, waited.messages.map((m) => m.text)], [false, ['parser looks fine']], "returns at once with the Director's unacknowledged message");

    assert.match(ok(await drover(['member', 'prompt', bobId, 'rerun the tests'])), /^Prompted member \d+ \(pane %\d+\)\.\n$/);
    const executed = json<{ line: string; pane_key: string }>(await drover(['member', 'exec', bobId, 'make check', '--json']));
    assert.deepEqual([executed.line, executed.pane_key], ['! make check', bob.placement.pane_key]);
    const capture = json<{ member_id: number; pane_id: string; pane_key: string; lines: number; content: string; content_sha256: string }>(await drover(['member', 'capture', bobId, '-l', '40', '--json']));
    assert.deepEqual([capture.member_id, capture.pane_id, capture.pane_key, capture.lines], [bob.member_id, bob.placement.pane_id, bob.placement.pane_key, 40]);
    assert.ok(capture.content.includes('rerun the tests') && capture.content.includes('! make check') && capture.content.includes(`[drover msg ${first} from ${director} `));
    assert.equal(capture.content_sha256, createHash('sha256').update(capture.content).digest('hex'));
    assert.ok(!capture.content.includes('\u001b'), 'escape sequences are stripped unless --ansi');

    const fleetCapture = json<{ members: { name: string; state: string; content?: string }[]; unregistered_panes: string[]; unregistered_pane_keys: string[] }>(
      await drover(['fleet', 'capture', fleet, '--json']),
    );
    assert.deepEqual(
      fleetCapture.members.map((m) => [m.name, m.state]),
      [
        ['Director', 'captured'],
        ['alice', 'captured'],
        ['bob', 'captured'],
      ],
    );
    assert.deepEqual([fleetCapture.unregistered_panes, fleetCapture.unregistered_pane_keys], [[], []]);

    const shown = json<{ name: string; kind: string; status: string; placement: { pane_id: string } }>(await drover(['member', 'show', bobId, '--json']));
    assert.deepEqual([shown.name, shown.kind, shown.status, shown.placement.pane_id], ['bob', 'member', 'active', bob.placement.pane_id]);
    assert.equal(ok(await drover(['member', 'delete', bobId])), `Deregistered member ${bobId} (killed).\n`);
    failed(await drover(['member', 'delete', director]), 1, /cannot deregister the root Director; use 'drover fleet delete' instead/);
    assert.match(ok(await drover(['fleet', 'show', fleet])), new RegExp(`^fleet ${fleet} 'team' director=${director} created=\\S+\\nmember_id.*\\n${director}\\s+Director.*\\n\\d+\\s+alice\\s+member\\s+shell\\s+tmux\\s+%\\d+\\n$`));
    assert.deepEqual(json<{ deregistered_count: number }>(await drover(['fleet', 'delete', fleet, '--json'])), { fleet_id: Number(fleet), deregistered_count: 2 });
    assert.equal((await server.listPanes()).length, 1, "only the Director's pane is left");
    assert.equal(ok(await drover(['fleet', 'list'])), '0 fleets.\n');
  });

  it('streams messages to a listener as JSON lines until interrupted, typing nothing', async () => {
    const created = json<{ fleet: { fleet_id: number }; director: { member_id: number } }>(await drover(['fleet', 'create', 'listeners', '--agent', 'shell', '--json']));
    const director = String(created.director.member_id);
    const alice = ok(await drover(['member', 'create', '--fleet', String(created.fleet.fleet_id), '--name', 'alice'])).split(' ')[0]!;
    ok(await drover(['message', 'send', '--from', alice, '--to', director, 'waiting before the listener']));
    const fleets = json<{ fleet_id: number; name: string; created_at: string; member_count: number }[]>(await drover(['fleet', 'list', '--json']));
    assert.deepEqual(fleets, [{ fleet_id: created.fleet.fleet_id, name: 'listeners', created_at: fleets[0]!.created_at, deleted_at: null, director_member_id: Number(director), member_count: 2 }]);
    const listener = await LongLivedChild.start([process.execPath, CLI_PATH, 'message', 'listen', '--member', director], { env: { ...sandbox.env, ...env }, cwd: sandbox.dir });
    try {
      const next = lines(listener.stdout);
      assert.equal((JSON.parse(await next()) as MessageJson).text, 'waiting before the listener');
      ok(await drover(['message', 'send', '--from', alice, '--to', director, 'arrived while listening']));
      const fresh = JSON.parse(await next()) as MessageJson;
      assert.deepEqual([fresh.text, fresh.to_member_id, fresh.notified_at], ['arrived while listening', Number(director), null]);
    } finally {
      process.kill(listener.pid, 'SIGINT');
    }
    assert.equal((await listener.exited).exitCode, 130);
  });

  it('refuses bad input with exit 2 and reports what is missing with exit 1, changing nothing', async () => {
    const outside = { TMUX: '', TMUX_PANE: '' };
    const [noMux, noPane, badModel, badPrompt, unknownFleet, badId, badTarget, newline, control, noFleet, unknownMessage] = await Promise.all([
      drover(['fleet', 'create', 'x'], outside),
      drover(['fleet', 'create', 'x'], { TMUX_PANE: '' }),
      drover(['member', 'create', '--fleet', '1', '--name', 'x', '--agent', 'shell', '--model', 'm']),
      drover(['member', 'create', '--fleet', '1', '--name', 'x', '--agent', 'claude', '--prompt', 'be {role}']),
      drover(['member', 'create', '--fleet', '77', '--name', 'x']),
      drover(['member', 'show', 'abc']),
      drover(['message', 'send', '--from', '1', '--to', '2', '--broadcast', 'hi']),
      drover(['member', 'prompt', '1', 'two\nlines']),
      drover(['member', 'exec', '1', 'echo \u001b[31m']),
      drover(['fleet', 'show', '77']),
      drover(['message', 'show', '999', '--json']),
    ]);
    // Outside any session the fleet looks for tmux as every command does; a Director still needs a pane.
    failed(noMux, 1, /drover fleet create must be run inside a tmux or herdr session \(TMUX_PANE is not set\)/);
    failed(noPane, 1, /drover fleet create must be run inside a tmux or herdr session \(TMUX_PANE is not set\)/);
    failed(badModel, 2, /the shell agent takes no --model/);
    failed(badPrompt, 2, /Unknown placeholder '\{role\}' in --prompt\. Supported placeholders: \{fleet_id\}, \{member_id\}, \{director_member_id\}, \{coding_agent\}/);
    failed(unknownFleet, 1, /fleet '77' not found\./);
    failed(badId, 2, /member id must be a positive integer \(got "abc"\)/);
    failed(badTarget, 2, /give exactly one of --to ID or --broadcast/);
    failed(newline, 2, /text may not contain newlines\./);
    failed(control, 2, /command may not contain control characters \(\\x1B at offset 5\)/);
    failed(noFleet, 1, /fleet '77' not found\./);
    assert.equal(unknownMessage.exitCode, 1);
    const { error } = JSON.parse(unknownMessage.text()) as { error: { code: string; message: string } };
    assert.deepEqual([error.code, error.message], ['not_found', 'Message 999 not found'], 'an unknown id is not_found, as the conventions list it');
  });
});

describe('drover fleet commands run from a shell in another tmux server', () => {
  const sandbox = cliSandbox();
  let home: Server;
  let other: Server;
  let atHome: NodeJS.ProcessEnv;
  let elsewhere: NodeJS.ProcessEnv;
  const drover = (args: readonly string[], env: NodeJS.ProcessEnv) => sandbox.drover(args, { env });

  before(async () => {
    [home, other] = await Promise.all([startTestServer(), startTestServer()]);
    const director = (await (await home.newSession({ name: 'fleet', width: 200, height: 50, cwd: sandbox.dir })).listPanes())[0]!.id;
    const shell = (await (await other.newSession({ name: 'elsewhere', width: 200, height: 50, cwd: sandbox.dir })).listPanes())[0]!.id;
    const base = { ...NO_MUX, SHELL: echoProgram(sandbox.dir) };
    atHome = { ...base, TMUX: `${home.endpoint.socketPath},${(await home.incarnation()).pid},0`, TMUX_PANE: director };
    elsewhere = { ...base, TMUX: `${other.endpoint.socketPath},${(await other.incarnation()).pid},0`, TMUX_PANE: shell };
  });
  after(() => Promise.all([home.close(), other.close()]));

  it("reach the members' own server: nothing is marked stale, messages go in, and member delete closes the pane there", async () => {
    const made = json<{ fleet: { fleet_id: number; director_member_id: number } }>(await drover(['fleet', 'create', 'team', '--agent', 'shell', '--json'], atHome)).fleet;
    const fleet = String(made.fleet_id);
    const created = json<{ member: { member_id: number; placement: { pane_id: string } } }>(await drover(['member', 'create', '--fleet', fleet, '--name', 'alice', '--json'], atHome)).member;
    const alice = String(created.member_id);

    const sent = await drover(['message', 'send', '--from', String(made.director_member_id), '--to', alice, 'from another server', '--json'], elsewhere);
    assert.equal(json<{ notification_sent: boolean }>(sent).notification_sent, true, sent.stderrText());
    assert.doesNotMatch(sent.stderrText(), /stale|gone/);
    const roster = json<{ member_id: number; placement: { stale_at: string | null; gone_at: string | null } }[]>(await drover(['member', 'list', '--fleet', fleet, '--json'], elsewhere));
    assert.deepEqual(
      roster.map((member) => [member.placement.stale_at, member.placement.gone_at]),
      [
        [null, null],
        [null, null],
      ],
    );

    ok(await drover(['member', 'delete', alice], elsewhere));
    assert.ok(!(await home.listPanes()).some((pane) => pane.id === created.placement.pane_id), "the member's pane on its own server was closed");
    ok(await drover(['fleet', 'delete', fleet], elsewhere));
  });

  it('message send --json reports the rows as delivery left them, and deleting a deleted fleet finds nothing, as for a member', async () => {
    const made = json<{ fleet: { fleet_id: number; director_member_id: number } }>(await drover(['fleet', 'create', 'again', '--agent', 'shell', '--json'], atHome)).fleet;
    const fleet = String(made.fleet_id);
    const from = String(made.director_member_id);
    const alice = String(json<{ member: { member_id: number } }>(await drover(['member', 'create', '--fleet', fleet, '--name', 'alice', '--json'], atHome)).member.member_id);

    const sent = json<{ message: MessageJson; notification_sent: boolean }>(await drover(['message', 'send', '--from', from, '--to', alice, 'hello', '--json'], atHome));
    assert.equal(sent.notification_sent, true);
    assert.match(sent.message.notified_at ?? '', /^\d{4}-/, 'a message sent into the pane says when');
    const broadcast = json<{ deliveries: MessageJson[]; delivered: number }>(await drover(['message', 'send', '--from', from, '--broadcast', 'all hands', '--json'], atHome));
    assert.equal(broadcast.delivered, 1);
    assert.deepEqual(
      broadcast.deliveries.map((delivery) => typeof delivery.notified_at),
      ['string'],
    );

    ok(await drover(['fleet', 'delete', fleet], atHome));
    failed(await drover(['fleet', 'delete', fleet], atHome), 1, new RegExp(`fleet '${fleet}' not found`));
    failed(await drover(['member', 'delete', alice], atHome), 1, new RegExp(`Member ${alice} not found`));
    const errorOf = (result: RunResult) => {
      assert.equal(result.exitCode, 1, result.text());
      return (JSON.parse(result.text()) as { error: { code: string; message: string; phase: string } }).error;
    };
    const [fleetGone, memberGone] = [errorOf(await drover(['fleet', 'delete', fleet, '--json'], atHome)), errorOf(await drover(['member', 'delete', alice, '--json'], atHome))];
    assert.match(fleetGone.message, new RegExp(`fleet '${fleet}' not found`));
    assert.deepEqual([fleetGone.code, fleetGone.phase], [memberGone.code, memberGone.phase], 'the same failure as a member that is gone');
  });
});

describe('interrupting the CLI while it types into a member pane', () => {
  const sandbox = cliSandbox();
  let server: Server;
  let env: NodeJS.ProcessEnv;
  let member: { id: string; pane: string; session: string };

  before(async () => {
    server = await startTestServer();
    const session = await server.newSession({ name: 'signals', width: 200, height: 50, cwd: sandbox.dir });
    env = { ...sandbox.env, ...NO_MUX, TMUX: `${server.endpoint.socketPath},${server.ownedRecord!.pid},0`, TMUX_PANE: (await session.listPanes())[0]!.id, SHELL: echoProgram(sandbox.dir) };
    const run = (args: readonly string[]) => sandbox.drover(args, { env });
    const fleet = json<{ fleet: { fleet_id: number } }>(await run(['fleet', 'create', 'signals', '--agent', 'shell', '--json'])).fleet.fleet_id;
    const created = json<{ member: { member_id: number; placement: { pane_id: string; session_id: string } } }>(await run(['member', 'create', '--fleet', String(fleet), '--name', 'target', '--json'])).member;
    member = { id: String(created.member_id), pane: created.placement.pane_id, session: created.placement.session_id };
    await eventually('the member to start', async () => (await server.pane(member.pane).capture()).toString('utf8').includes('drover db:'));
  });
  after(() => server.close());

  const screen = async (): Promise<string> => (await server.pane(member.pane).capture({ start: '-', join: true })).toString('utf8');
  const count = (text: string, part: string): number => text.split(part).length - 1;

  it('two SIGINTs 150 ms apart once member prompt holds the pane: the line goes in whole or not at all, and the CLI exits 130', async () => {
    const locks = new PaneLocks(paneLockDirectory(sandbox.env.DROVER_DB!));
    const key = paneLockKey('tmux', member.session, member.pane);
    const child = await LongLivedChild.start([process.execPath, CLI_PATH, 'member', 'prompt', member.id, 'echo interrupted-twice'], { env, cwd: sandbox.dir });
    try {
      // Delivery is paced by what the pane shows, so the moment between typing and Enter is too
      // short to aim at: interrupt once the CLI holds the pane's input lock, before or while it types.
      await eventually('the CLI to hold the pane input lock', async () => {
        const probe = await locks.tryAcquire(key);
        probe?.release();
        return probe === null;
      }, 10_000);
      const interrupt = (): boolean => {
        try {
          process.kill(child.pid, 'SIGINT');
          return true;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
          throw error;
        }
      };
      const interrupted = interrupt() && (await delay(150), interrupt());
      const exit = await child.exited;
      const seen = count(await screen(), 'echo interrupted-twice');
      // A signal landing after the CLI let go of its handler, on its way out, ends it the
      // default way: killed by SIGINT, which a shell reports as 130 too.
      if (interrupted) assert.ok(exit.exitCode === 130 || exit.signal === 'SIGINT', `exit ${exit.exitCode} / ${exit.signal}`);
      // cat prints a submitted line back, so a submitted line shows twice; once would be a line
      // left typed on the input line without its Enter.
      if (seen !== 0) await eventually('cat to print the submitted line back', async () => count(await screen(), 'echo interrupted-twice') >= 2, 10_000);
    } finally {
      await child.stop(100, 'SIGKILL');
    }
  });

  it('a SIGINT while waiting for the pane lock stops before anything is typed', async () => {
    const locks = new PaneLocks(paneLockDirectory(sandbox.env.DROVER_DB!));
    const guard = await locks.tryAcquire(paneLockKey('tmux', member.session, member.pane));
    assert.ok(guard, 'the test holds the pane input lock');
    const child = await LongLivedChild.start([process.execPath, CLI_PATH, 'member', 'prompt', member.id, 'echo never-typed'], { env, cwd: sandbox.dir });
    try {
      // The database is opened just before the lock is waited for (for 1.5 s): interrupt once it is open.
      await eventually('the CLI to open its database', () => openPaths(child.pid).includes(sandbox.env.DROVER_DB!), 10_000);
      process.kill(child.pid, 'SIGINT');
      guard.release();
      assert.equal((await child.exited).exitCode, 130);
      assert.doesNotMatch(await screen(), /never-typed/);
    } finally {
      guard.release();
      await child.stop(100, 'SIGKILL');
    }
  });
});

describe('fleet reads change nothing', () => {
  const sandbox = cliSandbox();

  it('a read of a database that does not exist says so, creating no file or directory', async () => {
    const missing = join(sandbox.dir, 'typo', 'drover.db');
    for (const args of [['fleet', 'list'], ['fleet', 'show', '1'], ['member', 'list', '--fleet', '1'], ['member', 'show', '1'], ['message', 'poll', '--member', '1'], ['message', 'show', '1']]) {
      failed(await sandbox.drover(args, { env: { ...NO_MUX, DROVER_DB: missing } }), 1, /no drover database at \S*typo\/drover\.db/);
    }
    assert.equal(existsSync(join(sandbox.dir, 'typo')), false);
  });

  it('reads while another process holds the write lock', async () => {
    const path = join(sandbox.dir, 'busy.db');
    const store = SqliteStore.open({ path });
    try {
      store.db.exec('BEGIN IMMEDIATE');
      const listed = await sandbox.drover(['fleet', 'list', '--json'], { env: { ...NO_MUX, DROVER_DB: path } });
      assert.deepEqual(json<unknown[]>(listed), []);
    } finally {
      store.db.exec('ROLLBACK');
      store.db.close();
    }
  });
});

describe('drover fleet on herdr', () => {
  const sandbox = cliSandbox();
  const herdr = new FakeHerdrServer({ seed: 'empty' });
  let env: NodeJS.ProcessEnv;
  before(async () => {
    const socketPath = join(sandbox.dir, 'herdr.sock');
    await herdr.start(socketPath);
    const { rootPane } = await new HerdrClient({ socketPath }).workspaceCreate({ label: 'fleet', cwd: sandbox.dir });
    env = { ...NO_MUX, TMUX: '', TMUX_PANE: '', HERDR_ENV: '1', HERDR_SOCKET_PATH: socketPath, HERDR_PANE_ID: rootPane.pane_id, SHELL: '/bin/sh' };
  });
  after(() => herdr.stop());

  it('creates the fleet from HERDR_PANE_ID, spawns and messages members over the socket, and deletes them', async () => {
    const drover = (args: readonly string[]) => sandbox.drover(args, { env });
    assert.match(ok(await drover(['fleet', 'create', 'crew', '--agent', 'shell'])), /^1 director=1 backend=herdr pane=w1:p1\n$/);
    const member = ok(await drover(['member', 'create', '--fleet', '1', '--name', 'alice']));
    const pane = /^\d+ alice agent=shell pane=(w1:p\d+)\n$/.exec(member)?.[1];
    assert.ok(pane, member);
    assert.match(ok(await drover(['message', 'send', '--from', '1', '--to', '2', 'hello over herdr'])), /\(notified\)\n$/);
    const typed = herdr.inputs().filter((input) => input.paneId === pane);
    assert.deepEqual(
      typed.map((input) => input.kind),
      ['text', 'keys', 'keys', 'text', 'keys'],
      'program start (text, enter), then escape, the line, enter',
    );
    assert.match(typed[3]!.payload[0]!, /^ : '\[drover msg 1 from 1 \S+\] hello over herdr \[drover\] Resume/);
    assert.equal(ok(await drover(['member', 'delete', '2'])), 'Deregistered member 2 (killed).\n');
    assert.deepEqual(herdr.paneIds(), ['w1:p1']);
  });
});

describe('drover fleet on zellij', () => {
  const sandbox = cliSandbox();

  it('refuses, naming each capability zellij lacks, before zellij is even looked for', async () => {
    // A zellij binary that does not exist: looking for it, or asking it anything, would fail otherwise.
    const env = { ...NO_MUX, TMUX: '', TMUX_PANE: '', DROVER_MUX: 'zellij', ZELLIJ_PANE_ID: '0', DROVER_ZELLIJ_BIN: join(sandbox.dir, 'no-zellij') };
    const refused = await sandbox.drover(['fleet', 'create', 'crew', '--agent', 'shell', '--json'], { env });
    assert.equal(refused.exitCode, 1, refused.stderrText());
    const { error } = JSON.parse(refused.text()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'unsupported');
    assert.match(error.message, /^drover fleets cannot run on zellij: zellij does not support splitPane: zellij's new-pane opens beside whichever pane has focus/);
    assert.match(error.message, /zellij does not support paneGeometry: .*; zellij does not support resizePane: /);
    assert.equal(json<unknown[]>(await sandbox.drover(['fleet', 'list', '--json'], { env })).length, 0, 'no fleet was created');
  });
});
