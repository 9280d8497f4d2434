/**
 * drover web across machines: this machine's tmux, and a host reached through a real OpenSSH
 * server on loopback behind the flaky proxy (so the test can take the host away and bring it
 * back), with its own tmux and drover. The API says which host each row is from and marks a
 * down host's rows stale; writes to a remote pane go through the host's own drover; a real
 * browser shows a banner while the host is down and drops it when it is back.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { remotePaneView, type HostView, type PaneView, type SnapshotView } from '../../src/bridge/index.js';
import { Hosts, RememberedRowsStore } from '../../src/hosts/index.js';
import { createMuxPort, TmuxAdapter, tmuxIds, type MuxPort } from '../../src/mux/index.js';
import { run } from '../../src/process/index.js';
import { Server, type Pane } from '../../src/tmux/index.js';
import { startSshd, sshdUnavailable, type FlakyAlias, type TestSshd } from '../fixtures/ssh/sshd.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { CHROMIUM, DESKTOP, launchChromium, seriousViolations } from './chromium.js';
import { PAGE_ASSETS, startWebWorld, suiteTeardown, type WebWorld } from './support.js';


describe('a host pane-map row as the page shows it', () => {
  const row = { session: 'build', window_index: 1, window_id: '@4', pane_id: '%7', pane_key: 'gpu::tmux::inc-1::%7', tab: 'agent', worktree: '/srv/app', repo: 'app', agent: 'claude', agent_state: 'waiting', agent_state_source: 'hook' };

  it('keeps the host and the host-qualified key, and takes the state from the row', () => {
    const view = remotePaneView({ host: 'gpu', stale: false, staleAgeMs: undefined, seenAt: '2026-01-01T00:00:00.000000Z', row });
    assert.equal(view.host, 'gpu');
    assert.equal(view.pane_key, 'gpu::tmux::inc-1::%7');
    assert.equal(view.pane_id, '%7');
    assert.equal(view.state, 'blocked');
    assert.equal(view.group, 'needs_you');
    assert.equal(view.space_id, 'gpu::build');
    assert.equal(view.stale, false);
    assert.equal(view.stale_age_ms, null);
  });

  it('carries the question its host found there, with the answers written on its line', () => {
    const merged = { host: 'gpu', stale: false, staleAgeMs: undefined, seenAt: '2026-01-01T00:00:00.000000Z', row: { ...row, agent_state: 'idle' } };
    assert.equal(remotePaneView(merged).group, 'idle');
    const asking = { ...merged, row: { pane_id: '%7', pane_key: row.pane_key, agent_state: 'idle', indicator: 'yes_no', snippet: 'Deploy? [y/n]', agent: null, rule: null } };
    const view = remotePaneView(merged, asking);
    assert.deepEqual([view.question?.snippet, view.question?.indicator, view.question?.options.map((option) => option.keys), view.group], ['Deploy? [y/n]', 'yes_no', [['y'], ['n']], 'needs_you']);
    assert.notEqual(view.question?.id, remotePaneView(merged, { ...asking, row: { ...asking.row, snippet: 'Really? [y/n]' } }).question?.id, 'another question, another id');
  });

  it("offers a menu under a host's question as its host read it, keys and all", () => {
    const merged = { host: 'gpu', stale: false, staleAgeMs: undefined, seenAt: '2026-01-01T00:00:00.000000Z', row };
    const answers = [
      { label: '1. Yes', keys: ['1', 'Enter'] },
      { label: '2. No', keys: ['2', 'Enter'] },
    ];
    const asking = { ...merged, row: { pane_id: '%7', pane_key: row.pane_key, agent_state: 'waiting', indicator: 'permission_prompt', snippet: 'Do you want to make this edit?', agent: 'claude', rule: 'claude.permission', answers } };
    const view = remotePaneView(merged, asking);
    assert.deepEqual(view.question?.options, answers);
    const redrawn = remotePaneView(merged, { ...asking, row: { ...asking.row, answers: [...answers, { label: '3. Edit', keys: ['3', 'Enter'] }] } });
    assert.notEqual(view.question?.id, redrawn.question?.id, 'a menu with other entries is another question');
    const garbled = remotePaneView(merged, { ...asking, row: { ...asking.row, answers: [{ label: '1. Yes', keys: [] }] } });
    assert.deepEqual(garbled.question?.options, [], 'answers without keys are not taken; the line offers none');
  });

  it('says a stale row is stale, with its age, and a row without agent state is unknown', () => {
    const view = remotePaneView({ host: 'gpu', stale: true, staleAgeMs: 42_000, seenAt: '2026-01-01T00:00:00.000000Z', row: { ...row, agent_state: null, agent: null } });
    assert.equal(view.stale, true);
    assert.equal(view.stale_age_ms, 42_000);
    assert.equal(view.state, 'unknown');
    assert.equal(view.state_source, 'none');
  });
});

const FAKE_AGENT = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'fake-agent.js');

// Without sshd the test is skipped, except in CI, which installs it: there it must run.
const unavailable = sshdUnavailable();
const skip = unavailable !== undefined && process.env.CI !== 'true' ? `skipped: ${unavailable}` : false;
const browserMissing = existsSync(CHROMIUM) ? false : `chromium is not installed at ${CHROMIUM} (apt-get install -y chromium)`;
if (browserMissing && process.env.CI === 'true') throw new Error(`${browserMissing}; CI must run the browser tests`);

describe('drover web with a host over a real OpenSSH server on loopback', { skip, concurrency: 1 }, () => {
  const teardown = suiteTeardown();
  after(() => teardown.run());
  const sandbox = cliSandbox();
  let sshd: TestSshd;
  let flaky: FlakyAlias;
  let remoteTmux: string;
  let remoteDrover: string;
  let world: WebWorld;
  let localPane: Pane;
  let remoteKey: string;


  /** What the remote pane shows now, read on the host through ssh (not through drover). */
  const remoteScreen = (): Promise<string> => sshd.exec(`${remoteTmux} capture-pane -p -t remote`);

  async function snapshot(): Promise<SnapshotView> {
    const answer = await world.call('/api/snapshot');
    assert.equal(answer.status, 200, answer.text);
    return answer.json as unknown as SnapshotView;
  }

  const hostBox = async (): Promise<{ host: HostView; panes: PaneView[] }> => {
    const view = await snapshot();
    return { host: view.hosts.find((host) => host.name === 'box')!, panes: view.panes.filter((pane) => pane.host === 'box') };
  };

  before(async () => {
    sshd = await startSshd();
    const login = (await sshd.exec('id -un')).trim();
    teardown.after(async () => {
      // The host's programs (its drover rpc, its tmux) end once their logins are gone; the login is removed after that.
      await sshd.halt();
      // (Not run as root, the login is the user running the test, whose processes go on.)
      if (login !== userInfo().username) await eventually('the login to have no processes left', async () => (await run(['pgrep', '-u', login], { timeoutMs: 5000 })).exitCode === 1, 20_000);
      await sshd.stop();
    });
    flaky = sshd.flakyAlias('flaky');
    remoteDrover = sshd.installDrover(CLI_PATH);
    // The host's own tmux, at the default socket its drover finds (TMUX_TMPDIR is the login's home there).
    remoteTmux = `TMUX_TMPDIR='${sshd.home}' tmux`;
    await sshd.exec(`${remoteTmux} new-session -d -s remote -x 80 -y 24 'cat'`);
    teardown.after(() => sshd.exec(`${remoteTmux} kill-server`).catch(() => undefined));

    const tmux = await startTestServer();
    teardown.after(() => tmux.close());
    localPane = (await tmux.newSession({ name: 'here', width: 80, height: 24, command: ['cat'], receipt: true })).pane;
    const binding = await Server.open(tmux.endpoint, { transport: 'control' });
    teardown.after(() => binding.close());
    const port: MuxPort = createMuxPort(new TmuxAdapter({ server: binding }));
    teardown.after(() => port.close());

    const hosts = Hosts.of([{ name: 'box', ssh: 'flaky', drover: remoteDrover }], {
      env: { ...sandbox.env, DROVER_SSH_BIN: sshd.sshWrapper },
      timings: { pingIntervalMs: 300, pingTimeoutMs: 1500, connectTimeoutMs: 3000, handshakeTimeoutMs: 15_000, backoffBaseMs: 200, backoffCapMs: 500, downAfterFailures: 2 },
    });
    teardown.after(() => hosts.close());
    const rows = join(sandbox.env.DROVER_STATE_DIR!, 'hosts');
    mkdirSync(rows, { recursive: true });
    world = await startWebWorld(teardown, { mux: port, assets: PAGE_ASSETS, hosts: { hosts, store: new RememberedRowsStore(rows), pollMs: 300 } });
    const { panes } = await eventually('the host to answer with its panes', async () => {
      const seen = await hostBox();
      return seen.host.reachable && seen.panes.length > 0 && seen;
    }, 60_000);
    remoteKey = panes[0]!.pane_key;
  });

  it('lists this machine and the host, each row saying which it is on', async () => {
    const view = await snapshot();
    const local = view.panes.find((pane) => pane.pane_id === tmuxIds.pane(localPane.id))!;
    assert.equal(local.host, 'local');
    assert.equal(local.stale, false);
    assert.match(local.pane_key, /^local::tmux::/);
    const remote = view.panes.find((pane) => pane.pane_key === remoteKey)!;
    assert.equal(remote.host, 'box');
    assert.equal(remote.stale, false);
    assert.match(remote.pane_key, /^box::tmux::/);
    assert.equal(remote.space_label, 'remote');
    assert.deepEqual(
      view.hosts.map((host) => [host.name, host.reachable, host.link_state]),
      [['box', true, 'up']],
    );
    assert.deepEqual([...view.triage_keys].sort(), view.panes.map((pane) => pane.pane_key).sort(), 'every pane of every host is in the triage');
    assert.deepEqual(view.triage, [local.pane_id], 'the triage of pane ids stays this machine’s');
  });

  it('types a reply into a remote pane through the host and answers with the host’s receipt', async () => {
    const answer = await world.post(`/api/panes/${encodeURIComponent(remoteKey)}/reply`, { text: 'hello from the hub' });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.host, 'box');
    assert.equal(answer.json.pane_key, remoteKey);
    assert.equal(typeof answer.json.status, 'string');
    assert.equal(typeof answer.json.delivery_id, 'string');
    await eventually('the text on the remote pane', async () => (await remoteScreen()).includes('hello from the hub'));
  });

  it('sends keys to a remote pane through the host', async () => {
    const answer = await world.post(`/api/panes/${encodeURIComponent(remoteKey)}/keys`, { keys: ['x', 'y', 'z', 'Enter'] });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json.sent, ['x', 'y', 'z', 'Enter']);
    assert.equal(answer.json.host, 'box');
    await eventually('the keys on the remote pane', async () => (await remoteScreen()).includes('xyz'));
  });

  it("shows a remote pane's branch, last line and when its screen last changed, from the host's glance", async () => {
    const before = await eventually('the echoed keys as the row’s last line', async () => {
      const pane = (await hostBox()).panes.find((candidate) => candidate.pane_key === remoteKey);
      return pane?.last_line === 'xyz' && pane.changed_at !== null && pane;
    }, 30_000);
    assert.equal(before.branch, null, 'the pane works outside git');
    assert.match(before.revision ?? '', /^[0-9a-f]{16}$/, 'the screen digest stands for its revision');
    const typed = await world.post(`/api/panes/${encodeURIComponent(remoteKey)}/keys`, { keys: ['a', 'b', 'c', 'Enter'] });
    assert.equal(typed.status, 200, typed.text);
    const after = await eventually('the new last line', async () => {
      const pane = (await hostBox()).panes.find((candidate) => candidate.pane_key === remoteKey);
      return pane?.last_line === 'abc' && pane;
    }, 30_000);
    assert.notEqual(after.revision, before.revision);
    assert.ok(Date.parse(after.changed_at!) > Date.parse(before.changed_at!), `${after.changed_at} after ${before.changed_at}`);
  });

  it('shows the question an agent on the host asks, from the host’s scan, and answers it with the host’s keys', async () => {
    // An agent there whose hooks report to the host's own drover, as a real one's do.
    const asker = join(sshd.dir, 'asker');
    writeFileSync(asker, `#!/bin/sh\nexport DROVER_FAKE_AGENT_HOOK='${JSON.stringify([remoteDrover, 'agent', 'hook'])}'\nexec '${sshd.node}' '${FAKE_AGENT}'\n`, { mode: 0o755 });
    const askerPane = (await sshd.exec(`${remoteTmux} new-window -d -t remote -n asker -P -F '#{pane_id}' '${asker}'`)).trim();
    const askerKey = (
      await eventually('the agent’s pane on the page', async () => (await hostBox()).panes.find((pane) => pane.pane_id === askerPane && pane.state !== 'unknown'), 30_000)
    ).pane_key;
    const typed = await world.post(`/api/panes/${encodeURIComponent(askerKey)}/reply`, { text: 'ask:yes_no' });
    assert.equal(typed.status, 200, typed.text);
    const asking = await eventually('the host’s scan to find the question', async () => {
      const pane = (await hostBox()).panes.find((candidate) => candidate.pane_key === askerKey);
      return pane?.question != null && pane;
    }, 30_000);
    const question = asking.question!;
    assert.equal(question.snippet, 'Apply the edit to src/app.ts? [y/n]');
    assert.deepEqual(question.options.map((option) => option.keys), [['y'], ['n']]);
    assert.equal(asking.group, 'needs_you');

    const wrong = await world.post(`/api/panes/${encodeURIComponent(askerKey)}/answer`, { question: 'not-this-one', option: 0 });
    assert.equal(wrong.json.error?.code, 'question_changed', wrong.text);
    const answered = await world.post(`/api/panes/${encodeURIComponent(askerKey)}/answer`, { question: question.id, option: 0 });
    assert.equal(answered.status, 200, answered.text);
    assert.deepEqual([answered.json.host, answered.json.keys], ['box', ['y']]);
    await eventually('the question to be gone', async () => (await hostBox()).panes.find((candidate) => candidate.pane_key === askerKey)?.question === null, 30_000);
    assert.doesNotMatch(await sshd.exec(`${remoteTmux} capture-pane -p -t '${askerPane}'`), /\[y\/n\]\s*$/, 'the agent took the answer');
  });

  it('refuses what it offers only for this machine’s panes, sending nothing to the host', async () => {
    const renamed = await world.post(`/api/panes/${encodeURIComponent(remoteKey)}/rename`, { label: 'never' });
    assert.equal(renamed.status, 501, renamed.text);
    assert.equal(renamed.json.error?.code, 'unsupported');
    assert.match(renamed.json.error?.message ?? '', /rename for this machine's panes only; nothing was sent to box/);
    const unknown = await world.post(`/api/panes/${encodeURIComponent(remoteKey.replace(/^box::/, 'elsewhere::'))}/keys`, { keys: ['q'] });
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(unknown.json.error?.message ?? '', /names host elsewhere, which is not one of drover host list \(box\)/);
  });

  it('shows the remote screen through the host', async () => {
    const answer = await world.call(`/api/panes/${encodeURIComponent(remoteKey)}/grid`);
    assert.equal(answer.status, 200, answer.text);
    assert.match(String(answer.json.text), /hello from the hub/);
  });

  it('marks a host that went away stale, refuses writes to it before sending, and is live again when it is back', async () => {
    flaky.network({ mode: 'stall' });
    const down = await eventually('the host to be unreachable', async () => {
      const seen = await hostBox();
      return !seen.host.reachable && seen;
    }, 40_000);
    assert.ok(down.panes.length > 0, 'the host’s last panes are kept');
    for (const pane of down.panes) {
      assert.equal(pane.stale, true, `${pane.pane_key} is stale`);
      assert.equal(typeof pane.stale_age_ms, 'number');
    }
    assert.equal(down.host.stale, true);
    assert.notEqual(down.host.last_seen_at, null);

    const refused = await world.post(`/api/panes/${encodeURIComponent(remoteKey)}/reply`, { text: 'never typed' });
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.json.error?.code, 'host_unreachable');
    assert.match(refused.json.error?.message ?? '', /box cannot be reached .*nothing was sent/);
    const keys = await world.post(`/api/panes/${encodeURIComponent(remoteKey)}/keys`, { keys: ['q'] });
    assert.equal(keys.json.error?.code, 'host_unreachable');

    flaky.network({ mode: 'pass' });
    const back = await eventually('the host to be live again', async () => {
      const seen = await hostBox();
      return seen.host.reachable && seen.panes.length > 0 && seen.panes.every((pane) => !pane.stale) && seen;
    }, 60_000);
    assert.equal(back.host.stale, false);
    assert.ok(!(await remoteScreen()).includes('never typed'), 'nothing refused was typed later');
  });

  it('in a real browser: a banner while the host is down, gone once it is back', { skip: browserMissing }, async () => {
    const browser: Browser = await launchChromium();
    teardown.after(() => browser.close());
    const context = await browser.newContext(DESKTOP);
    const page: Page = await context.newPage();
    const { code } = world.bridge.devices.createPairingCode();
    await page.goto(`${world.bridge.url}#pair=${code}`);
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    // The host column: each card says its machine, and the filter offers each machine.
    await page.getByRole('combobox', { name: 'Host' }).waitFor();
    await eventually('a card of the host', async () => (await page.getByRole('main').getByRole('link').allTextContents()).some((text) => text.includes('box ·')));

    const banner = page.getByRole('region', { name: 'Host box unreachable' });
    assert.equal(await banner.count(), 0, 'no banner while the host is up');
    flaky.network({ mode: 'stall' });
    await banner.waitFor({ timeout: 40_000 });
    assert.match((await banner.textContent()) ?? '', /Host box cannot be reached .*last seen/);
    await eventually('the host’s cards to say stale', async () => (await page.getByRole('main').getByRole('link').allTextContents()).some((text) => text.includes('box ·') && text.includes('stale')));
    assert.deepEqual(await seriousViolations(page), [], 'the banner, the stale cards and the Host filter pass axe-core');

    await page.getByRole('combobox', { name: 'Host' }).selectOption('local');
    assert.ok((await page.getByRole('main').getByRole('link').allTextContents()).every((text) => !text.includes('box ·')), 'the filter shows this machine only');
    await page.getByRole('combobox', { name: 'Host' }).selectOption('');

    flaky.network({ mode: 'pass' });
    await banner.waitFor({ state: 'detached', timeout: 60_000 });
    await context.close();
  });
});
