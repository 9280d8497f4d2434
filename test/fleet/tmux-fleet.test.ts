import assert from 'node:assert/strict';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { createMuxPort, MuxError, TmuxAdapter } from '../../src/mux/index.js';
import { ArgumentError, DroverError } from '../../src/process/index.js';
import type { Server } from '../../src/tmux/index.js';
import {
  SqlBroker,
  FleetBackend,
  FleetRuntime,
  MemberCreationError,
  PaneInputError,
  createMember,
  captureMember,
  createFleetHere,
  deleteMember,
  deliverPending,
  execInMember,
  shellPromptLine,
  promptMember,
  type ClosedPane,
} from '../../src/fleet/index.js';
import { eventually } from '../support/wait.js';
import { FAKE_AGENT, fakeSpans, echoRunning, paneHistory, paneProgram, tmuxFleet, type TmuxFleet } from './support.js';

interface Geometry {
  id: string;
  left: number;
  top: number;
  width: number;
  height: number;
}

async function geometry(server: Server, director: string): Promise<{ window: { width: number; height: number }; panes: Map<string, Geometry> }> {
  const record = (await server.snapshot()).pane(director as `%${number}`)!;
  const window = record.window();
  const panes = new Map(
    window
      .panes()
      .toArray()
      .map((p) => [p.paneId as string, { id: p.paneId as string, left: p.paneLeft as number, top: p.paneTop as number, width: p.paneWidth as number, height: p.paneHeight as number }]),
  );
  return { window: { width: window.windowWidth as number, height: window.windowHeight as number }, panes };
}

/** Director at the left edge, full height; members right of it, top to bottom in `order`, heights equal ±1. */
async function assertFleetLayout(s: TmuxFleet, order: readonly string[]): Promise<void> {
  const { window, panes } = await geometry(s.server, s.director);
  const director = panes.get(s.director)!;
  assert.deepEqual([director.left, director.top, director.height], [0, 0, window.height], 'the Director keeps the left edge at full height');
  assert.equal(panes.size, order.length + 1, 'no other panes');
  if (order.length === 0) {
    assert.equal(director.width, window.width, 'alone, the Director has the whole width back');
    return;
  }
  const column = order.map((id) => panes.get(id)!);
  for (const pane of column) assert.ok(pane.left > director.left + director.width - 1, `${pane.id} is right of the Director`);
  assert.deepEqual(
    [...column].sort((a, b) => a.top - b.top).map((pane) => pane.id),
    [...order],
    'members stack top to bottom',
  );
  const heights = column.map((pane) => pane.height);
  assert.ok(Math.max(...heights) - Math.min(...heights) <= 1, `equal heights ±1: ${heights.join(' ')}`);
}

describe('members on real tmux', { concurrency: true }, () => {
  it('places members beside the Director in an equal-height column, in its cwd, and reflows as they are deleted', async (t) => {
    const s = await tmuxFleet(t);
    const panes: string[] = [];
    for (const name of ['alice', 'bob', 'carol']) {
      const created = await createMember(s.runtime, { fleetId: s.fleetId, name, cwd: s.dir });
      assert.deepEqual(created.warnings, []);
      assert.equal(created.member.codingAgent, 'shell', "members inherit the Director's agent");
      assert.equal(created.member.placement?.pane, created.pane);
      panes.push(created.pane);
      await assertFleetLayout(s, panes);
    }
    const [alice, bob, carol] = panes as [string, string, string];
    const directorPlacement = (await s.broker.getMember(s.directorId)).placement!;
    for (const member of (await s.broker.listMembers(s.fleetId)).slice(1)) {
      assert.deepEqual([member.placement?.session, member.placement?.window], [directorPlacement.session, directorPlacement.window]);
    }
    const cwd = (await s.server.pane(bob).display('#{pane_current_path}')).toString().trim();
    assert.equal(realpathSync(cwd), realpathSync(s.dir), 'the member starts in the invoking directory');
    await s.server.waitForOutput(s.server.pane(bob), `drover db: ${s.store.path}`, { timeoutMs: 10_000 });

    const bobId = (await s.broker.listMembers(s.fleetId)).find((m) => m.name === 'bob')!.memberId;
    const deleted = await deleteMember(s.runtime, bobId);
    assert.deepEqual([deleted.placement?.pane, deleted.diagnostics], [bob, []]);
    await assert.rejects(() => s.broker.getMember(bobId), /not found/);
    const { panes: after } = await geometry(s.server, s.director);
    assert.deepEqual([...after.keys()].sort(), [s.director, alice, carol].sort(), "bob's pane is closed");
    assert.equal(after.get(s.director)!.height, (await geometry(s.server, s.director)).window.height);

    for (const name of ['alice', 'carol']) await deleteMember(s.runtime, (await s.broker.listMembers(s.fleetId)).find((m) => m.name === name)!.memberId);
    await assertFleetLayout(s, []);
  });

  it("starts a member's program from the runtime's PATH, which a tmux client hands to the pane it splits", async (t) => {
    const s = await tmuxFleet(t);
    // A program only the runtime's PATH has, as an agent installed out of the way is.
    const bin = join(s.dir, 'bin');
    mkdirSync(bin);
    paneProgram(bin, 'greet', `sh -c 'echo greeted-from-the-runtime-path; exec cat'`);
    const env = { ...s.runtime.env, PATH: `${bin}:${process.env.PATH}`, SHELL: paneProgram(s.dir, 'member', 'greet') };
    const runtime = await FleetRuntime.open({ broker: s.broker, env, tmuxEndpoint: s.server.endpoint });
    t.after(() => runtime.close());
    const member = await createMember(runtime, { fleetId: s.fleetId, name: 'greeter', cwd: s.dir });
    await s.server.waitForOutput(s.server.pane(member.pane), 'greeted-from-the-runtime-path', { timeoutMs: 10_000 });
  });

  it('deregisters the member and leaves no pane when tmux refuses the split', async (t) => {
    const s = await tmuxFleet(t);
    // A window too narrow to split: tmux answers "no space for new pane".
    await s.server.command(['resize-window', '-t', s.director, '-x', '2', '-y', '2']);
    let failed: MemberCreationError | undefined;
    await assert.rejects(createMember(s.runtime, { fleetId: s.fleetId, name: 'alice', cwd: s.dir }), (error: unknown) => {
      assert.ok(error instanceof MemberCreationError);
      assert.match(error.message, /^member \d+ was not created: tmux could not split pane %\d+ for the member: .*no space/);
      assert.deepEqual(error.diagnostics, [], 'tmux created no pane, so there was nothing to close');
      failed = error;
      return true;
    });
    await assert.rejects(() => s.broker.getMember(failed!.memberId), /not found/);
    assert.equal((await geometry(s.server, s.director)).panes.size, 1);
    assert.deepEqual(
      (await s.broker.listMembers(s.fleetId)).map((m) => m.name),
      ['Director'],
    );
  });

  it('closes the pane it spawned and deregisters the member when recording the pane fails, signals deferred throughout', async (t) => {
    const { spans } = fakeSpans();
    class FailingRecord extends SqlBroker {
      override recordPane(): never {
        assert.equal(spans.depth, 1, 'the spawn and the registry commit run inside a termination span');
        throw new Error('disk I/O error');
      }
    }
    const s = await tmuxFleet(t);
    const runtime = await FleetRuntime.open({ broker: new FailingRecord(s.store), env: s.runtime.env, tmuxEndpoint: s.server.endpoint, spans });
    t.after(() => runtime.close());
    await assert.rejects(createMember(runtime, { fleetId: s.fleetId, name: 'alice', cwd: s.dir }), (error: unknown) => {
      assert.ok(error instanceof MemberCreationError);
      assert.match(error.message, /was not created: disk I\/O error$/);
      assert.deepEqual(error.diagnostics, []);
      return true;
    });
    assert.equal((await geometry(s.server, s.director)).panes.size, 1, 'the spawned pane was closed');
    assert.equal((await s.broker.listMembers(s.fleetId)).length, 1, 'the member was deregistered');
    assert.equal(spans.depth, 0);
  });

  it('tidies the layout around a Director on the member\'s own server only, never around one found stale', async (t) => {
    class Recording extends FleetBackend {
      readonly tidiedAround: string[] = [];
      override rebalance(closed: ClosedPane, directorPane: string, deadline: number): Promise<void> {
        this.tidiedAround.push(directorPane);
        return super.rebalance(closed, directorPane, deadline);
      }
    }
    const s = await tmuxFleet(t);
    const recording = new Recording(createMuxPort(new TmuxAdapter({ server: s.server })));
    const runtime = await FleetRuntime.open({ broker: s.broker, env: s.runtime.env, backends: { tmux: recording } });
    t.after(() => runtime.close());
    t.after(() => recording.close());
    const alice = await createMember(runtime, { fleetId: s.fleetId, name: 'alice', cwd: s.dir });
    const bob = await createMember(runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    await deleteMember(runtime, alice.member.memberId);
    assert.deepEqual(recording.tidiedAround, [s.director], 'the column is tidied around the Director');

    // The Director's pane id, once found to name a pane of another server run, names nothing to resize.
    assert.equal(await s.broker.markServerReplaced(s.directorId, s.director), true);
    const deleted = await deleteMember(runtime, bob.member.memberId);
    assert.deepEqual([deleted.placement?.pane, deleted.diagnostics], [bob.pane, []]);
    assert.deepEqual(recording.tidiedAround, [s.director], 'no tidy around a stale Director');
    assert.deepEqual([...(await geometry(s.server, s.director)).panes.keys()], [s.director], "bob's pane is closed all the same");
  });

  it('reports compensation it could not do, closing no other pane', async (t) => {
    class FailingRegistry extends SqlBroker {
      override recordPane(): never {
        throw new Error('disk I/O error');
      }
      override deregisterMember(): never {
        throw new Error('database is locked');
      }
    }
    class Unclosable extends FleetBackend {
      override closePane(): Promise<ClosedPane> {
        return Promise.reject(new Error('lost server'));
      }
    }
    const s = await tmuxFleet(t);
    const unclosable = new Unclosable(createMuxPort(new TmuxAdapter({ server: s.server })));
    const runtime = await FleetRuntime.open({ broker: new FailingRegistry(s.store), env: s.runtime.env, backends: { tmux: unclosable } });
    t.after(() => runtime.close());
    t.after(() => unclosable.close());
    await assert.rejects(createMember(runtime, { fleetId: s.fleetId, name: 'alice', cwd: s.dir }), (error: unknown) => {
      assert.ok(error instanceof MemberCreationError);
      const spawned = [...error.diagnostics.join('\n').matchAll(/cleanup failed for pane (%\d+): lost server/g)];
      assert.equal(spawned.length, 1);
      assert.deepEqual(error.diagnostics, [`cleanup failed for pane ${spawned[0]![1]}: lost server`, `cleanup failed for member ${error.memberId}: database is locked`]);
      return true;
    });
    assert.equal((await geometry(s.server, s.director)).panes.size, 2, 'the spawned pane stays; no other pane was touched');
  });
});

describe('fleet failures on real tmux', () => {
  it('are the one multiplexer error family, with its reasons, never a tmux client error', async (t) => {
    const s = await tmuxFleet(t);
    const bob = await createMember(s.runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    const family = (reason: string) => (error: unknown) => {
      assert.ok(error instanceof MuxError, `${(error as Error).name}: ${(error as Error).message}`);
      assert.deepEqual([error.mux, error.reason], ['tmux', reason]);
      return true;
    };
    await s.server.pane(bob.pane).kill();
    await assert.rejects(captureMember(s.runtime, bob.member.memberId), family('gone'));
    const elsewhere = await FleetRuntime.open({ broker: s.broker, env: { ...s.runtime.env, TMUX_PANE: '%9999' }, tmuxEndpoint: s.server.endpoint });
    t.after(() => elsewhere.close());
    await assert.rejects(createFleetHere(elsewhere, { name: 'nowhere', agent: 'shell' }), family('gone'));
    await s.server.command(['kill-server']).catch(() => undefined);
    await assert.rejects(captureMember(s.runtime, s.directorId), family('unreachable'));
    await assert.rejects(createMember(s.runtime, { fleetId: s.fleetId, name: 'carol', cwd: s.dir }), family('unreachable'));
  });
});

// One at a time: each submission must fit the real five-second input budget (Escape within
// 1 s, a tmux client per keystroke), and siblings starting agents and servers eat into it.
describe('pane input on real tmux', () => {
  it('five pending messages are all delivered in one hold, oldest first, each line whole', async (t) => {
    const s = await tmuxFleet(t);
    const bob = await createMember(s.runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    await echoRunning(s.server, bob.pane);
    const messages = await Promise.all([1, 2, 3, 4, 5].map((n) => s.broker.sendMessage({ from: s.directorId, to: bob.member.memberId, text: `update ${n}\twith a tab` })));
    const ids = messages.map((m) => m.messageId);
    const options = { ...s.runtime.notify, recipientId: bob.member.memberId, fleetId: s.fleetId };

    // Settles end when the pane shows each line: five fit one 5 s hold, where fixed settles
    // (1.5 s for the Escape-led line, 1 s for each direct one) fitted three at most.
    const holds: number[][] = [];
    while (holds.length < ids.length && (await Promise.all(ids.map((id) => s.broker.showMessage(id)))).some((message) => message.notifiedAt === null)) {
      const attempt = await deliverPending(options);
      assert.equal(attempt.diagnostic, null);
      holds.push(attempt.notified);
    }
    assert.equal(holds.length, 1, `holds: ${JSON.stringify(holds)}`);
    assert.deepEqual(holds.flat(), ids, 'every message once, oldest first');

    const lines = (await Promise.all(messages.map((message) => s.broker.showMessage(message.messageId)))).map((message) => shellPromptLine(message, { escapeLead: true }));
    // The last Enter was just sent: tmux shows what the pane printed back a moment later.
    const history = await eventually('every line to reach the pane', async () => {
      const shown = await paneHistory(s.server, bob.pane);
      return lines.every((line) => shown.includes(line)) ? shown : undefined;
    });
    let from = 0;
    for (const [i, message] of messages.entries()) {
      const line = lines[i]!;
      assert.ok(line.includes('update') && line.includes('␉with a tab'), 'the tab is folded');
      const at = history.indexOf(line, from);
      assert.ok(at >= 0, `message ${message.messageId} arrived whole and after the one before`);
      from = at + line.length;
    }
  });

  it('types each line whole into bash at its prompt, inert: no Escape for its line editor to swallow the first characters with, and nothing of the message run', async (t) => {
    const s = await tmuxFleet(t);
    const runtime = await FleetRuntime.open({ broker: s.broker, env: { ...s.runtime.env, SHELL: paneProgram(s.dir, 'bash-member', 'bash --norc --noprofile -i') }, tmuxEndpoint: s.server.endpoint });
    t.after(() => runtime.close());
    const bob = await createMember(runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    await eventually('bash to own the pane', async () => (await s.server.snapshot()).pane(bob.pane as `%${number}`)?.paneCurrentCommand === 'bash');
    // What agents write to each other: code in backquotes, a substitution, a second command.
    const marker = (name: string): string => join(s.dir, name);
    const texts = [`rerun \`touch ${marker('backquoted')}\` now`, `then $(touch ${marker('substituted')}); touch ${marker('chained')} and report, it's done`];
    const messages = await Promise.all(texts.map((text) => s.broker.sendMessage({ from: s.directorId, to: bob.member.memberId, text })));
    const attempt = await deliverPending({ ...runtime.notify, recipientId: bob.member.memberId, fleetId: s.fleetId });
    assert.deepEqual([attempt.notified, attempt.diagnostic], [messages.map((message) => message.messageId), null]);
    // Led by Escape, readline took "[d" with it and bash was left inside the quote of the clause
    // about a dismissed prompt; typed bare, bash ran the line as a command, and the message's
    // backquotes and $(…) with it. The second line may be echoed as typed ahead, before bash
    // answers the first: each shows whole, and bash ran each as the no-op it is.
    const lines = (await Promise.all(messages.map((message) => s.broker.showMessage(message.messageId)))).map((message) => shellPromptLine(message));
    let shown = '';
    await eventually('both lines, whole, each taken by bash', async () => {
      shown = await paneHistory(s.server, bob.pane);
      return lines.every((line) => shown.includes(line)) && /[$#]$/.test(shown.trimEnd()) ? shown : undefined;
    }).catch((error: Error) => assert.fail(`${error.message}:\n${shown}`));
    assert.doesNotMatch(shown, /command not found|syntax error/);
    for (const name of ['backquoted', 'substituted', 'chained']) assert.equal(existsSync(marker(name)), false, `bash ran the message's ${name} command`);
    await promptMember({ broker: runtime.broker, locks: runtime.locks, memberId: bob.member.memberId, openPort: runtime.openPort, text: 'echo prompt-arrived' });
    await s.server.waitForOutput(s.server.pane(bob.pane), /echo prompt-arrived\nprompt-arrived\n/, { timeoutMs: 10_000 });
  });

  it('runs nothing of a message in a shell with a half-typed command, an open quote, or behind another program', async (t) => {
    const s = await tmuxFleet(t);
    const runtime = await FleetRuntime.open({ broker: s.broker, env: { ...s.runtime.env, SHELL: paneProgram(s.dir, 'bash-member', 'bash --norc --noprofile -i') }, tmuxEndpoint: s.server.endpoint });
    t.after(() => runtime.close());
    const bob = await createMember(runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    const pane = s.server.pane(bob.pane);
    await eventually('bash to own the pane', async () => (await s.server.snapshot()).pane(bob.pane as `%${number}`)?.paneCurrentCommand === 'bash');
    const marker = (name: string): string => join(s.dir, name);
    const deliver = async (text: string): Promise<void> => {
      const message = await s.broker.sendMessage({ from: s.directorId, to: bob.member.memberId, text });
      const attempt = await deliverPending({ ...runtime.notify, recipientId: bob.member.memberId, fleetId: s.fleetId });
      assert.deepEqual([attempt.notified, attempt.diagnostic], [[message.messageId], null]);
    };
    /** Waits until the pane's history shows `fragment` and ends at a prompt (`$`/`#`, or `>` for a continuation). */
    const settled = async (what: string, fragment: string, prompt = /[$#]$/): Promise<void> => {
      let shown = '';
      const ready = async (): Promise<true | undefined> => {
        shown = await paneHistory(s.server, bob.pane);
        return shown.includes(fragment) && prompt.test(shown.trimEnd()) ? true : undefined;
      };
      await eventually(what, ready).catch((error: Error) => assert.fail(`${error.message}:\n${shown}`));
    };

    // A command someone left half-typed at the prompt: the line would have been appended to it.
    // (The space after it: appended to, the draft would touch exactly this marker.)
    await pane.sendText(`touch ${marker('draft')} `);
    await settled('the draft to show', marker('draft'), /draft$/);
    await deliver('after a draft');
    await settled('the first line taken', 'after a draft');
    // An unfinished quote: bash waits for its end, and the message's own quote would have closed it.
    await pane.sendText('echo "');
    await pane.sendKeys(['Enter']);
    await settled('the continuation prompt', 'echo "', />$/);
    await deliver(`see x" $(touch ${marker('in-quote')}) #`);
    await settled('the second line taken', 'see x');
    // A shell behind another program: drover sees `script`, leads with Escape, and the line is inert still.
    await pane.sendText("script -q -c 'PS1=inner$ bash --norc --noprofile -i' /dev/null");
    await pane.sendKeys(['Enter']);
    await settled('the shell behind script at its prompt', 'script -q', /inner\$$/);
    assert.equal((await s.server.snapshot()).pane(bob.pane as `%${number}`)?.paneCurrentCommand, 'script');
    await deliver(`it's done' $(touch ${marker('behind-script')}) 'ok`);
    await settled('the third line taken', 'behind-script');
    await pane.sendText(`touch ${marker('control')}`);
    await pane.sendKeys(['Enter']);
    await eventually('the control command to run', async () => (existsSync(marker('control')) ? true : undefined));
    for (const name of ['draft', 'in-quote', 'behind-script']) assert.equal(existsSync(marker(name)), false, `the shell ran ${name}`);
    assert.doesNotMatch(await paneHistory(s.server, bob.pane), /command not found|syntax error/);
  });

  it('types prompts and native commands into a coding agent, and refuses control characters typing nothing', async (t) => {
    const s = await tmuxFleet(t);
    const runtime = await FleetRuntime.open({ broker: s.broker, env: { ...s.runtime.env, SHELL: paneProgram(s.dir, 'agent', `"${process.execPath}" "${FAKE_AGENT}" --busy-ms 0`) }, tmuxEndpoint: s.server.endpoint });
    t.after(() => runtime.close());
    const agent = await createMember(runtime, { fleetId: s.fleetId, name: 'agent', cwd: s.dir });
    const pane = s.server.pane(agent.pane);
    await s.server.waitForOutput(pane, /> /, { timeoutMs: 15_000 });
    const input = { broker: runtime.broker, locks: runtime.locks, memberId: agent.member.memberId, openPort: runtime.openPort };

    const prompted = await promptMember({ ...input, text: 'hello there' });
    assert.equal(prompted.line, 'hello there');
    await s.server.waitForOutput(pane, /> hello there/, { timeoutMs: 10_000 });
    const executed = await execInMember({ ...input, command: 'ls -la' });
    assert.equal(executed.line, '! ls -la');
    // Wait until the agent has finished the turn, so the screen is at rest before comparing.
    await s.server.waitForOutput(pane, /> ! ls -la\s*\n● Done\./, { timeoutMs: 10_000 });

    // The agent redraws its screen in writes tmux may take in pieces: compare from a resting screen.
    let previous: string | undefined;
    const before = await eventually('the pane to be at rest', async () => {
      const shown = await paneHistory(s.server, agent.pane);
      const resting = shown === previous;
      previous = shown;
      return resting ? shown : undefined;
    });
    await assert.rejects(promptMember({ ...input, text: 'ring \u0007 the bell' }), (error: unknown) => error instanceof ArgumentError && /control characters \(\\x07 at offset 5\)/.test(error.message));
    await assert.rejects(execInMember({ ...input, command: 'echo a\nrm -rf b' }), { name: 'ArgumentError', message: 'command may not contain newlines.' });
    assert.equal(await paneHistory(s.server, agent.pane), before, 'nothing was typed');
  });

  it('reports no dispatch when the pane is gone before anything is typed', async (t) => {
    const s = await tmuxFleet(t);
    const bob = await createMember(s.runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    await s.server.pane(bob.pane).kill();
    await assert.rejects(promptMember({ broker: s.broker, locks: s.locks, memberId: bob.member.memberId, openPort: s.runtime.openPort, text: 'hi' }), (error: unknown) => {
      assert.ok(error instanceof PaneInputError);
      assert.equal(error.step, 'escape');
      assert.equal(error.dispatched, 'none');
      return true;
    });
    const backend = await s.runtime.openBackend('tmux');
    // Generous: on a loaded machine the tmux client alone can take over a second to answer.
    await assert.rejects(backend.input(bob.pane).channel(performance.now() + 10_000).type('text'), (error: unknown) => error instanceof DroverError && error.delivery === 'not_sent');
  });
});
