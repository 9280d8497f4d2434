import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import {
  BridgeError,
  DeviceRegistry,
  EventHub,
  HostAllowlist,
  PAIRING_CODE_TTL_MS,
  RateLimiter,
  checkReplyText,
  cssColor,
  finishedTurn,
  formatEvent,
  isLoopbackAddress,
  isStaleTitle,
  normalisePairingCode,
  originVerdict,
  paneName,
  paneCardLine,
  paneWhere,
  presentSpan,
  readAgentScreen,
  resolveState,
  hostBanner,
  restartBanner,
  scanProgramScreen,
  showsSessions,
  showsSpaces,
  staleNote,
  staleTitleNote,
  triageGroup,
  triageOrder,
  witnessTitle,
  type PaneView,
  type TitleFacts,
} from '../../src/bridge/index.js';
import { AGENT_KINDS, agentScreen, rulesFor, screenOfRows } from '../../src/agents/index.js';
import { loadScreenFixture, screenFixtures } from '../agents/screens/fixtures.js';
import { QUESTIONS } from '../fixtures/fake-agent.js';
import { MUX_DECLARATIONS } from '../../src/mux/index.js';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'drover-web-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function codeOf(error: unknown): string | undefined {
  return error instanceof BridgeError ? error.code : undefined;
}

describe('pairing and devices', () => {
  it('trades a one-time code for a device token, keeping only hashes on disk', (t) => {
    const dir = tempDir(t);
    const registry = new DeviceRegistry(dir);
    const { code } = registry.createPairingCode();
    assert.match(code, /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    const { device, token } = registry.redeem(code.toLowerCase().replace('-', ' '), 'phone');
    assert.equal(device.name, 'phone');
    assert.deepEqual(registry.authenticate(token), device);
    assert.equal(registry.authenticate(`${token}x`), undefined, 'a forged token is nobody');
    assert.equal(registry.authenticate(undefined), undefined);
    const stored = JSON.stringify(new DeviceRegistry(dir).list()) + JSON.stringify(registry.list());
    assert.equal(stored.includes(token), false);
    assert.equal((statSync(join(dir, 'devices.json')).mode & 0o777).toString(8), '600');
    assert.throws(() => registry.redeem(code), (error) => codeOf(error) === 'no_pairing_code', 'the code works once');
  });

  it('burns the code on the fifth wrong try, after which even the right code is refused', (t) => {
    const registry = new DeviceRegistry(tempDir(t));
    const { code } = registry.createPairingCode();
    for (let tries = 1; tries <= 4; tries += 1) {
      assert.throws(() => registry.redeem('AAAA-AAAA'), (error) => codeOf(error) === 'pairing_invalid' && (error as Error).message.includes(`${5 - tries} tries left`));
    }
    assert.throws(() => registry.redeem('AAAA-AAAA'), (error) => codeOf(error) === 'pairing_locked');
    assert.throws(() => registry.redeem(code), (error) => codeOf(error) === 'pairing_locked');
    assert.equal(registry.hasPairing(), false);
  });

  it('refuses a code after ten minutes', (t) => {
    let now = Date.UTC(2026, 0, 1);
    const registry = new DeviceRegistry(tempDir(t), () => now);
    const { code } = registry.createPairingCode();
    now += PAIRING_CODE_TTL_MS;
    assert.throws(() => registry.redeem(code), (error) => codeOf(error) === 'pairing_expired');
  });

  it('sees a revocation written by another process on the next check', (t) => {
    const dir = tempDir(t);
    const server = new DeviceRegistry(dir);
    const { token, device } = server.redeem(server.createPairingCode().code);
    assert.notEqual(server.authenticate(token), undefined);
    new DeviceRegistry(dir).revoke(device.deviceId);
    assert.equal(server.authenticate(token), undefined);
    assert.throws(() => server.revoke('nope'), (error) => codeOf(error) === 'not_found' && /drover web devices/.test((error as Error).message));
  });

  it('normalises a typed code', () => {
    assert.equal(normalisePairingCode(' abcd-efgh '), 'ABCDEFGH');
  });
});

describe('host, origin and rate checks', () => {
  it('tells loopback addresses from others', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]']) assert.equal(isLoopbackAddress(host), true, host);
    for (const host of ['0.0.0.0', '::', '192.168.1.2', 'example.com', '128.0.0.1']) assert.equal(isLoopbackAddress(host), false, host);
  });

  it('answers loopback names, its bound address and allowed names, and nothing else', () => {
    const hosts = new HostAllowlist(['192.168.1.5'], ['box.tailnet.ts.net']);
    for (const host of ['127.0.0.1:7717', '127.0.0.1:8080', 'localhost', '[::1]:7717', '192.168.1.5:7717', 'box.tailnet.ts.net', 'BOX.tailnet.ts.net:443']) {
      assert.equal(hosts.allows(host), true, host);
    }
    for (const host of ['evil.example:7717', 'evil.example', '127.0.0.1.evil.example', '192.168.1.6:7717', '', 'a b', undefined]) assert.equal(hosts.allows(host), false, String(host));
  });

  it('lets only this page write or listen', () => {
    const host = '127.0.0.1:7717';
    assert.deepEqual(originVerdict({ origin: 'http://127.0.0.1:7717', host }, true), { ok: true });
    assert.deepEqual(originVerdict({ origin: 'https://box.ts.net', host: 'box.ts.net' }, true), { ok: true });
    assert.equal(originVerdict({ origin: 'http://evil.example', host }, true).ok, false);
    assert.equal(originVerdict({ origin: 'http://127.0.0.1:9999', host }, true).ok, false);
    assert.equal(originVerdict({ origin: 'null', host }, true).ok, false);
    assert.equal(originVerdict({ host }, true).ok, false, 'a write without Origin');
    assert.deepEqual(originVerdict({ host, secFetchSite: 'same-origin' }, false), { ok: true }, 'a same-origin stream');
    assert.equal(originVerdict({ host, secFetchSite: 'cross-site' }, false).ok, false);
  });

  it('allows a burst of writes, then one per refill', () => {
    let now = 0;
    const limiter = new RateLimiter({ burst: 3, perSecond: 2 }, () => now);
    assert.deepEqual([1, 2, 3].map(() => limiter.take('d').ok), [true, true, true]);
    assert.deepEqual(limiter.take('d'), { ok: false, retryAfterSeconds: 1 });
    assert.equal(limiter.take('other').ok, true, 'each device has its own bucket');
    now += 500;
    assert.equal(limiter.take('d').ok, true);
    assert.equal(limiter.take('d').ok, false);
  });
});

describe('the event ring', () => {
  it('replays exactly the events after a Last-Event-ID, and asks for a resync when they are gone', () => {
    const hub = new EventHub(3);
    const ids = [1, 2, 3, 4, 5].map((n) => hub.publish('pane', { pane_id: `p${n}`, pane_key: `local::tmux::1-1::p${n}`, revision: `${n}` }).id);
    assert.equal(hub.size, 3, 'memory is the ring, not the history');
    assert.deepEqual(hub.since(ids[2]!)?.map((event) => event.id), [ids[3], ids[4]]);
    assert.deepEqual(hub.since(ids[4]!), []);
    assert.deepEqual(hub.since(ids[1]!)?.map((event) => event.id), [ids[2], ids[3], ids[4]]);
    assert.equal(hub.since(ids[0]!), undefined, 'older than the ring');
    assert.equal(hub.since('deadbeef.2'), undefined, 'another run');
    assert.equal(hub.since(`${ids[0]!.split('.')[0]}.99`), undefined, 'ahead of this run');
    assert.equal(hub.since('garbage'), undefined);
    assert.equal(formatEvent({ id: 'a.1', kind: 'topology', data: {} }), 'id: a.1\nevent: topology\ndata: {}\n\n');
  });
});

describe('triage', () => {
  it('takes a question over everything, then the screen, the multiplexer, the hooks', () => {
    assert.deepEqual(resolveState({ muxStatus: 'working', phase: 'exited', hook: null, asking: false }), { state: 'working', source: 'mux' }, 'a screen the agent left says less than the multiplexer');
    assert.deepEqual(resolveState({ muxStatus: null, phase: 'exited', hook: 'active', asking: false }), { state: 'done', source: 'screen' });
    assert.deepEqual(resolveState({ muxStatus: 'working', phase: 'composer', hook: 'active', asking: true }), { state: 'blocked', source: 'screen' });
    assert.deepEqual(resolveState({ muxStatus: 'working', phase: 'composer', hook: 'active', asking: false }), { state: 'idle', source: 'screen' });
    assert.deepEqual(resolveState({ muxStatus: 'done', phase: 'unknown', hook: 'active', asking: false }), { state: 'done', source: 'mux' });
    assert.deepEqual(resolveState({ muxStatus: null, phase: null, hook: 'waiting', asking: false }), { state: 'blocked', source: 'hook' });
    assert.deepEqual(resolveState({ muxStatus: 'unknown', phase: null, hook: null, asking: false }), { state: 'unknown', source: 'none' });
    assert.equal(finishedTurn('working', 'idle'), true);
    assert.equal(finishedTurn('blocked', 'idle'), false);
  });

  it('orders needs-you, finished, working, idle and keeps the layout order inside a group', () => {
    const panes = [
      { pane_id: 'a', group: triageGroup({ state: 'idle', asking: false, finishedUnseen: false }) },
      { pane_id: 'b', group: triageGroup({ state: 'working', asking: false, finishedUnseen: false }) },
      { pane_id: 'c', group: triageGroup({ state: 'idle', asking: false, finishedUnseen: true }) },
      { pane_id: 'd', group: triageGroup({ state: 'unknown', asking: true, finishedUnseen: false }) },
      { pane_id: 'e', group: triageGroup({ state: 'blocked', asking: false, finishedUnseen: true }) },
    ];
    assert.deepEqual(triageOrder(panes), ['d', 'e', 'c', 'b', 'a']);
  });
});

describe('screens from a grid', () => {
  it('read every recorded agent screen as the real geometry does, but for a cursor-only verdict', () => {
    const differing: string[] = [];
    for (const agent of AGENT_KINDS) {
      const rules = rulesFor(agent)!;
      for (const fixture of screenFixtures(agent)) {
        const real = rules.read(fixture.screen);
        const fromGrid = rules.read(screenOfRows(fixture.capture));
        if (real.phase !== fromGrid.phase || real.composer?.text !== fromGrid.composer?.text) differing.push(`${agent}/${fixture.name}`);
      }
    }
    // Only the cursor tells Codex's leftover transcript above a shell prompt from Codex itself.
    assert.deepEqual(differing, ['codex/exited']);
  });

  it('offers each agent permission prompt with numbered answers as buttons', () => {
    const expected: Record<string, string[]> = {
      claude: ['1. Yes', '2. No'],
      codex: ['1. Yes, proceed (y)', "2. Yes, and don't ask again for commands that start with `echo drover-tool-ran` (p)", '3. No, and tell Codex what to do differently (esc)'],
      gemini: ['1. Allow once', '2. Allow for this session', '3. No, suggest changes (esc)'],
      opencode: [],
    };
    for (const agent of AGENT_KINDS) {
      const [version] = screenFixtures(agent).map((fixture) => fixture.version);
      const fixture = loadScreenFixture(agent, version!, 'permission');
      const verdict = readAgentScreen(screenOfRows(fixture.capture), rulesFor(agent)!);
      assert.equal(verdict.phase, 'permission', agent);
      assert.equal(verdict.question?.indicator, 'permission_prompt');
      assert.deepEqual(verdict.question?.options.map((option) => option.label), expected[agent], agent);
      // Claude Code's digit only moves the selection; the others' digit answers.
      verdict.question?.options.forEach((option, index) => assert.deepEqual(option.keys, agent === 'claude' ? [String(index + 1), 'Enter'] : [String(index + 1)]));
    }
  });

  it("turns the fake agent's questions into the answers it takes", () => {
    const screenOf = (lines: readonly string[]): ReturnType<typeof agentScreen> => agentScreen(['some output', '', ...lines].join('\n'), { width: 80, height: 10, cursor: null });
    const answers = (kind: string): string[] | undefined => scanProgramScreen('p1', screenOf(QUESTIONS[kind]!.lines), 'idle').question?.options.map((option) => option.keys.join(' '));
    assert.deepEqual(answers('yes_no'), ['y', 'n']);
    assert.deepEqual(answers('action_word'), ['y', 'n']);
    assert.deepEqual(answers('enumerated_options'), ['1', '2']);
    assert.deepEqual(answers('menu'), ['1', '2', '3']);
    assert.deepEqual(answers('press_key'), ['Enter']);
    assert.deepEqual(answers('question_mark'), [], 'a question that wants words offers no buttons');
    assert.equal(scanProgramScreen('p1', screenOf(QUESTIONS.yes_no!.lines), null).question, null, 'no state, no scan');
    assert.equal(scanProgramScreen('p1', screenOf(QUESTIONS.yes_no!.lines), 'active').question, null, 'an active program is mid-turn');
  });

  it('tells two different questions apart and one question read twice as the same', () => {
    const screen = (lines: readonly string[]): ReturnType<typeof agentScreen> => agentScreen(lines.join('\n'), { width: 80, height: 5, cursor: null });
    const first = scanProgramScreen('p1', screen(['Apply the edit to a.ts? [y/n]']), 'idle').question!;
    const again = scanProgramScreen('p1', screen(['Apply the edit to a.ts? [y/n]']), 'idle').question!;
    const next = scanProgramScreen('p1', screen(['Apply the edit to b.ts? [y/n]']), 'idle').question!;
    assert.equal(first.fingerprint, again.fingerprint);
    assert.notEqual(first.fingerprint, next.fingerprint);
  });
});

describe('the mirror and replies', () => {
  it('colours spans as CSS values and swaps colours for inverse', () => {
    assert.equal(cssColor(1), '#cd3131');
    assert.equal(cssColor(196), '#ff0000');
    assert.equal(cssColor(16), '#000000');
    assert.equal(cssColor(244), '#808080');
    assert.equal(cssColor('#123456'), '#123456');
    assert.deepEqual(presentSpan({ bold: true, fg: 2 }), { classes: ['sgr-bold'], color: '#0dbc79', background: null });
    assert.deepEqual(presentSpan({ inverse: true, fg: 2 }), { classes: ['sgr-inverse'], color: null, background: '#0dbc79' });
  });

  it('refuses a reply it cannot send as it is, before anything is sent', () => {
    const tmux = { mux: 'tmux', declaration: MUX_DECLARATIONS.tmux } as const;
    const herdr = { mux: 'herdr', declaration: MUX_DECLARATIONS.herdr } as const;
    assert.equal(checkReplyText('yes, go on', herdr), 'yes, go on');
    assert.equal(checkReplyText('two\nlines', tmux), 'two\nlines', 'tmux pastes, so a line break stays one');
    assert.throws(
      () => checkReplyText('two\nlines', herdr),
      (error) => codeOf(error) === 'multiline_unsupported' && /herdr does not support pasteText: herdr's socket offers no paste/.test((error as Error).message),
    );
    assert.throws(() => checkReplyText('esc\x1b[0m', tmux), (error) => codeOf(error) === 'bad_request' && /control character/.test((error as Error).message));
    assert.throws(() => checkReplyText('   ', tmux), (error) => codeOf(error) === 'bad_request');
    assert.throws(() => checkReplyText(42, tmux), (error) => codeOf(error) === 'bad_request');
  });
});

describe('a title that outlived its program', () => {
  /** Successive looks at one pane; the staleness after each. */
  function staleness(looks: readonly TitleFacts[]): boolean[] {
    let witness: ReturnType<typeof witnessTitle>;
    return looks.map((pane) => {
      witness = witnessTitle(witness, pane);
      return isStaleTitle(witness, pane);
    });
  }

  it('goes stale once the program that wrote it leaves the foreground', () => {
    assert.deepEqual(
      staleness([
        { title: undefined, foreground: 'bash', alive: true },
        { title: '✳ Fix the tests', foreground: 'claude', alive: true },
        { title: '✳ Fix the tests', foreground: 'claude', alive: true },
        { title: '✳ Fix the tests', foreground: 'bash', alive: true },
      ]),
      [false, false, false, true],
    );
  });

  it("is the shell's when a shell wrote it, whatever runs after", () => {
    assert.deepEqual(
      staleness([
        { title: 'me@box: ~/src', foreground: 'bash', alive: true },
        { title: 'me@box: ~/src', foreground: 'make', alive: true },
        { title: 'notes.txt - VIM', foreground: 'vim', alive: true },
        { title: 'me@box: ~/src', foreground: 'bash', alive: true },
      ]),
      [false, false, false, false],
    );
  });

  it('is stale on a pane whose program exited, and judged not at all without a foreground command', () => {
    assert.deepEqual(staleness([{ title: 'build', foreground: 'make', alive: false }]), [true]);
    assert.deepEqual(staleness([{ title: 'build', foreground: undefined, alive: true }, { title: 'build', foreground: 'sh', alive: true }]), [false, false]);
  });
});

describe('the words on the page', () => {
  const pane = (fields: Partial<PaneView>): PaneView =>
    ({ pane_id: '%3', pane_key: 'local::tmux::1-2::%3', label: null, title: null, title_stale: false, foreground: 'bash', space_label: 'work', tab_id: '@1', tab_label: 'logs', ...fields }) as PaneView;

  it('names a pane by its title only while the title is current', () => {
    assert.equal(paneName(pane({ title: 'claude: tests', foreground: 'claude' })), 'claude: tests');
    assert.equal(paneName(pane({ title: 'claude: tests', title_stale: true })), 'bash');
    assert.equal(staleTitleNote(pane({ title: 'claude: tests', title_stale: true })), 'title “claude: tests” left by a program that has exited');
    assert.equal(staleTitleNote(pane({ title: 'claude: tests' })), null);
    assert.equal(paneName(pane({ label: 'reviewer', title: 'x', title_stale: true })), 'reviewer');
  });

  it('shows no space where the multiplexer has one', () => {
    assert.equal(paneWhere(pane({}), { spaces: 'many' }), 'work › logs');
    assert.equal(paneWhere(pane({}), { spaces: 'one' }), 'logs');
    assert.equal(showsSpaces({ spaces: 'one' }), false);
    // Two panes of one tab running the same program: the card says which is which.
    const twins = [pane({}), pane({ pane_id: '%4', pane_key: 'local::tmux::1-2::%4' })].map((twin) => paneCardLine(twin, { spaces: 'many' }, false));
    assert.deepEqual(twins, ['bash · work › logs · %3', 'bash · work › logs · %4']);
    assert.equal(paneCardLine(pane({ host: 'gpu', agent: 'codex' }), { spaces: 'one' }, true), 'gpu · codex · logs · %3');
    assert.equal(showsSpaces(null), true, 'before the declaration is read, spaces are assumed');
  });

  it('lists sessions only where there are several', () => {
    const session = (name: string, current: boolean) => ({ name, current });
    assert.equal(showsSessions({ available: true, reason: null, sessions: [session('default', true), session('review', false)] }), true);
    assert.equal(showsSessions({ available: true, reason: null, sessions: [session('default', true)] }), false);
    assert.equal(showsSessions({ available: false, reason: 'tmux does not support listSessions', sessions: [] }), false);
  });

  it('says when the server was restarted and what happens to what was meant for the old one', () => {
    const text = restartBanner('tmux', { at: '2026-03-01T09:30:05.000Z', previous_incarnation: '1-1', incarnation: '2-2' }, 'en-GB');
    assert.match(text, /^The tmux server was restarted \(01\/03\/2026 \d\d:30:05\)\. These are the new server's panes: replies, answers and keys meant for a pane of the old one are refused/);
  });

  it('says how long ago a host that cannot be reached was seen, and whether its panes are its last known ones', () => {
    const now = Date.parse('2027-01-15T08:05:00Z');
    const host = { name: 'gpu', reachable: false, link_state: 'down', last_seen_at: '2027-01-15T08:02:00.000000Z', latency_ms: null, stale: true, stale_age_ms: 180_000, error: 'host gpu is down' } as const;
    assert.equal(hostBanner(host, now), 'Host gpu cannot be reached (down): last seen 3 min ago; its panes below are as they were then, marked stale. Nothing can be sent to it until it is back.');
    assert.match(hostBanner({ ...host, link_state: 'auth_required', last_seen_at: null, stale: false }, now), /^Host gpu cannot be reached \(auth required\): it has not been reached since drover web started; none of its panes are known\./);
    assert.equal(hostBanner({ ...host, link_state: 'connecting', last_seen_at: null, stale: false }, now), 'Host gpu is not connected yet (connecting): its panes appear once it answers.');
    assert.equal(staleNote({ stale: false, stale_age_ms: null }), null);
    assert.equal(staleNote({ stale: true, stale_age_ms: 5 * 60_000 }), 'stale: as seen 5 min ago');
  });
});
