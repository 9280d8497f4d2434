/**
 * The page in a real browser: Debian's chromium driven by playwright-core, on a phone and a
 * desktop viewport, against a private tmux server running the fake agent, a log pane whose text
 * carries markup and escapes, and a fleet. Assertions are on roles and text, never on pixels.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { DeviceRegistry, type Bridge } from '../../src/bridge/index.js';
import { createMember } from '../../src/fleet/index.js';
import { createMuxPort, TmuxAdapter, tmuxIds, type MuxPort } from '../../src/mux/index.js';
import type { Pane } from '../../src/tmux/index.js';
import { paneHistory, tmuxFleet, type TmuxFleet } from '../fleet/support.js';
import { FakeHerdrServer } from '../fixtures/herdr/server.js';
import { openHerdrWorld } from '../fixtures/herdr/world.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { FAKE_AGENT, screenShows } from '../panes/live.js';
import { RestartableServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { CHROMIUM, DESKTOP, launchChromium, PHONE } from './chromium.js';
import { PAGE_ASSETS, startWebWorld, suiteTeardown, tmuxOpener, type Teardown, type WebWorld } from './support.js';

async function textOf(locator: Locator): Promise<string> {
  return (await locator.textContent()) ?? '';
}

/** Waits until the locator's text contains `text`; a timeout says what the locator showed last. */
async function shows(locator: Locator, text: string | RegExp, timeoutMs = 20_000): Promise<void> {
  let seen = '';
  try {
    await eventually(
      `${locator.toString()} to show ${String(text)}`,
      async () => {
        seen = await textOf(locator).catch(() => '');
        return typeof text === 'string' ? seen.includes(text) : text.test(seen);
      },
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; it showed ${JSON.stringify(seen)}`, { cause: error });
  }
}

/** A page of `bridge` paired as `drover web pair` pairs one: the code after # in the address. */
async function pairedPage(context: BrowserContext, bridge: Bridge): Promise<Page> {
  const page = await context.newPage();
  const { code } = bridge.devices.createPairingCode();
  await page.goto(`${bridge.url}#pair=${code}`);
  await page.getByRole('heading', { name: 'Agents' }).waitFor();
  return page;
}

const browserMissing = existsSync(CHROMIUM) ? false : `chromium is not installed at ${CHROMIUM} (apt-get install -y chromium)`;
if (browserMissing && process.env.CI === 'true') throw new Error(`${browserMissing}; CI must run the browser tests`);

describe('drover web in a real browser', { concurrency: 1, skip: browserMissing }, () => {
  const teardown = suiteTeardown();
  after(() => teardown.run());
  let fleet: TmuxFleet;
  let world: WebWorld;
  let bridge: Bridge;
  let browser: Browser;
  let agent: Pane;
  let log: Pane;
  let logId: string;
  let alice: Awaited<ReturnType<typeof createMember>>;
  let sizes: string;

  async function paneSizes(): Promise<string> {
    return (await fleet.server.command(['list-panes', '-a', '-F', '#{pane_id} #{pane_width}x#{pane_height} #{window_width}x#{window_height}'])).stdout.toString('utf8');
  }

  before(async () => {
    fleet = await tmuxFleet(teardown);
    alice = await createMember(fleet.runtime, { fleetId: fleet.fleetId, name: 'alice', cwd: fleet.dir });
    const session = fleet.server.session((await fleet.server.pane(fleet.director).display('#{session_id}')).toString('utf8').trim());
    agent = (await session.newWindow({ name: 'agent', command: ['node', FAKE_AGENT, '--busy-ms', '200'], receipt: true })).pane;
    await screenShows(agent, '╭');
    log = (
      await session.newWindow({
        name: 'log',
        command: ['sh', '-c', `printf '<script>window.pwned=1</script> <img src=x onerror="window.pwned=2"> \\033]0;evil title\\007\\033[31mred\\033[0m plain\\n'; exec cat -v`],
        receipt: true,
      })
    ).pane;
    await screenShows(log, 'plain');
    const port: MuxPort = createMuxPort(new TmuxAdapter({ server: fleet.server }));
    teardown.after(() => port.close());
    world = await startWebWorld(teardown, { mux: port, fleet: fleet.runtime, assets: PAGE_ASSETS });
    bridge = world.bridge;
    logId = tmuxIds.pane(log.id);
    // The agent asks before anyone looks.
    await agent.sendText('ask:menu');
    await agent.sendKeys(['Enter']);
    await screenShows(agent, 'Do you want to make this edit');
    sizes = await paneSizes();
    browser = await launchChromium();
    teardown.after(() => browser.close());
  });


  it('on a phone: pairs, lists the waiting agent first, and answers its question with a button', async () => {
    const context = await browser.newContext(PHONE);
    try {
      const page = await pairedPage(context, bridge);
      await shows(page.getByRole('navigation', { name: 'Sections' }).getByRole('link').first(), 'Home (1 needs you)');
      const needsYou = page.getByRole('region', { name: /Needs you/ });
      await needsYou.waitFor();
      const first = needsYou.getByRole('link').first();
      await shows(first, 'Do you want to make this edit to app.ts?');
      const regions = await page.getByRole('main').getByRole('region').allTextContents();
      assert.match(regions[0]!, /^Needs you \(1\)/, 'the agent that waits comes first');

      await first.click();
      const question = page.getByRole('group', { name: 'Question' });
      await shows(question, 'Do you want to make this edit to app.ts?');
      const mirror = page.getByRole('region', { name: 'Pane screen' });
      await shows(mirror, '1. Yes');
      await question.getByRole('button', { name: '1. Yes' }).click();
      await shows(mirror, 'answer: 1');
      await page.getByRole('group', { name: 'Question' }).waitFor({ state: 'detached' });
      await eventually('the agent to have taken the answer', async () => (await paneHistory(fleet.server, agent.id)).includes('answer: 1'));
      assert.equal(await page.getByRole('toolbar', { name: 'Keys' }).getByRole('button', { name: 'Send Escape' }).isEnabled(), true);
    } finally {
      await context.close();
    }
  });

  it('on a phone: mirrors a pane live after send-keys from outside, keeps its markup inert, and shows a reply receipt', async () => {
    const context = await browser.newContext(PHONE);
    try {
      const page = await pairedPage(context, bridge);
      await page.goto(`${bridge.url}#/pane/${encodeURIComponent(logId)}`);
      const mirror = page.getByRole('region', { name: 'Pane screen' });
      await shows(mirror, '<script>window.pwned=1</script> <img src=x onerror="window.pwned=2">');
      assert.equal(await page.evaluate('window.pwned'), undefined, 'no pane text ran as script');
      assert.equal(await mirror.locator('img, script').count(), 0, 'no pane text became an element');
      assert.doesNotMatch(await textOf(mirror), /evil title|\x1b/, 'escape sequences draw nothing');
      const red = mirror.getByText('red', { exact: true });
      const computedColor = (element: unknown): string => (globalThis as unknown as { getComputedStyle(node: unknown): { color: string } }).getComputedStyle(element).color;
      assert.equal(await red.evaluate(computedColor), 'rgb(205, 49, 49)', 'the SGR colour is kept');

      // Typed from outside the page, as a person at the terminal would.
      await fleet.server.command(['send-keys', '-t', log.id, 'typed-outside-42', 'Enter']);
      await shows(mirror, 'typed-outside-42');

      await page.getByRole('textbox', { name: 'Reply text' }).fill('reply from the phone');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await shows(page.getByRole('status').filter({ hasText: /not verifiable/ }), 'the text was typed and Enter pressed');
      assert.match(await textOf(page.locator('#receipt')), /^not verifiable: drover has no screen rules for /, 'the receipt says its status once');
      await shows(mirror, 'reply from the phone');
      assert.equal(await page.getByRole('textbox', { name: 'Reply text' }).inputValue(), '');

      // tmux pastes, so Shift+Enter's line break reaches the pane as a line break.
      const composer = page.getByRole('textbox', { name: 'Reply text' });
      assert.equal(await composer.getAttribute('placeholder'), 'Reply… (Shift+Enter for a new line)');
      await composer.fill('first of two');
      await composer.press('Shift+Enter');
      await composer.pressSequentially('second of two');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await shows(mirror, 'second of two');
      assert.match(await textOf(mirror), /first of two\s*second of two/);
    } finally {
      await context.close();
    }
  });

  it("on a phone: reads the Director's inbox live, acknowledges, and sends a fleet message", async () => {
    const context = await browser.newContext(PHONE);
    try {
      const page = await pairedPage(context, bridge);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Fleet' }).click();
      const team = page.getByRole('region', { name: 'team' });
      await team.waitFor();
      const incoming = await fleet.broker.sendMessage({ from: alice.member.memberId, to: fleet.directorId, text: 'review ready' });
      const inbox = team.getByRole('list', { name: 'Inbox' });
      await shows(inbox, 'alice: review ready');
      await inbox.getByRole('button', { name: `Ack message ${incoming.messageId}` }).click();
      await shows(inbox, '✓');
      assert.equal((await fleet.broker.showMessage(incoming.messageId)).statusState, 'completed');

      const form = team.getByRole('form', { name: 'Send as Director' });
      await form.getByRole('combobox', { name: 'To' }).selectOption({ label: 'alice' });
      await form.getByRole('textbox', { name: 'Message' }).fill('ship it from the phone');
      await form.getByRole('button', { name: 'Send' }).click();
      await shows(form.getByRole('status'), /message \d+ delivered/);
      await eventually('the line in alice’s pane', async () => (await paneHistory(fleet.server, alice.pane)).includes('ship it from the phone'));
      // Another message draws the view again: what a send said, and a half-written reply, stay.
      await form.getByRole('textbox', { name: 'Message' }).fill('half written');
      await fleet.broker.sendMessage({ from: alice.member.memberId, to: fleet.directorId, text: 'one more thing' });
      await shows(inbox, 'alice: one more thing');
      assert.match(await textOf(form.getByRole('status')), /message \d+ delivered/);
      assert.equal(await form.getByRole('textbox', { name: 'Message' }).inputValue(), 'half written');
    } finally {
      await context.close();
    }
  });

  it('on a desktop: pairs through the form and shows the triage list beside the pane', async () => {
    const context = await browser.newContext(DESKTOP);
    try {
      const page = await context.newPage();
      await page.goto(bridge.url);
      const form = page.getByRole('form', { name: 'Pair this browser' });
      const { code } = bridge.devices.createPairingCode();
      await form.getByRole('textbox', { name: 'Pairing code' }).fill('WRONG-CODE');
      await form.getByRole('button', { name: 'Pair' }).click();
      await shows(form.getByRole('status'), 'wrong pairing code (4 tries left)');
      await form.getByRole('textbox', { name: 'Pairing code' }).fill(code.toLowerCase());
      await form.getByRole('button', { name: 'Pair' }).click();
      await page.getByRole('heading', { name: 'Agents' }).waitFor();

      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Spaces' }).click();
      await page.getByRole('heading', { name: 'Spaces' }).waitFor();
      await page.getByRole('main').getByRole('link').filter({ hasText: '› log' }).click();
      const side = page.getByRole('complementary', { name: 'All panes' });
      await side.waitFor();
      assert.ok((await side.getByRole('link').count()) >= 4, 'every pane is listed beside the open one');
      const mirror = page.getByRole('region', { name: 'Pane screen' });
      await fleet.server.command(['send-keys', '-t', log.id, 'desktop-live-7', 'Enter']);
      await shows(mirror, 'desktop-live-7');
      await shows(page.getByRole('status').filter({ hasText: /live|reconnecting|connecting/ }).first(), 'live');

      // Revoked from the terminal: the next look at the panes asks to pair again.
      const device = new DeviceRegistry(world.stateDirectory).list().find((entry) => entry.name === 'browser' && entry.revokedAt === null)!;
      new DeviceRegistry(world.stateDirectory).revoke(device.deviceId);
      await fleet.server.command(['rename-window', '-t', log.id, 'renamed-log']);
      await page.getByRole('heading', { name: 'Pair this browser' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('shows a not-found view with a link home for an address that names nothing, even a broken one', async () => {
    const context = await browser.newContext(DESKTOP);
    try {
      const page = await pairedPage(context, bridge);
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${bridge.url}#/pane/%E0%A4%A`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      await shows(page.getByRole('main'), 'There is no page at #/pane/%E0%A4%A');
      assert.deepEqual(errors, [], 'nothing thrown uncaught');
      await page.getByRole('link', { name: 'Back to the home page' }).click();
      await page.getByRole('heading', { name: 'Agents' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it("never resized the operator's panes", async () => {
    assert.equal(await paneSizes(), sizes);
  });
});

/**
 * drover web over a tmux server the test can stop and start again at the same socket, running
 * `cat`, and a desktop page paired with it; all of it ended with `teardown`.
 */
async function catOnRestartableServer(teardown: Teardown): Promise<{ tmux: RestartableServer; world: WebWorld; context: BrowserContext; page: Page }> {
  const tmux = new RestartableServer();
  teardown.after(() => tmux.dispose());
  await tmux.start(['cat']);
  const world = await startWebWorld(teardown, { openMux: tmuxOpener(tmux.socketPath, 300), assets: PAGE_ASSETS });
  const browser = await launchChromium();
  teardown.after(() => browser.close());
  const context = await browser.newContext(DESKTOP);
  teardown.after(() => context.close());
  return { tmux, world, context, page: await pairedPage(context, world.bridge) };
}

describe('drover web in a real browser, across a tmux restart', { skip: browserMissing }, () => {
  const teardown = suiteTeardown();
  after(() => teardown.run());

  it('keeps serving, shows the new server’s panes under a banner saying when it restarted, and refuses a reply typed for the old %0', async () => {
    const { tmux, world, page } = await catOnRestartableServer(teardown);

    await page.getByRole('main').getByRole('link').first().click();
    const meta = page.locator('#pane-meta');
    await shows(meta, 'cat');
    const composer = page.getByRole('textbox', { name: 'Reply text' });
    await composer.fill('pending-for-the-old-server');

    await tmux.restart(['cat']);
    const banner = page.getByRole('region', { name: 'Server restarted' });
    await shows(banner, /^The tmux server was restarted \(.+\)\. These are the new server's panes/);
    await shows(meta, 'This pane was on the tmux server before it was restarted');

    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const receipt = page.locator('#receipt');
    await shows(receipt, /belonged to an earlier run of the tmux server, which was replaced \(restarted at .+\); nothing was sent/);
    assert.equal(await composer.inputValue(), 'pending-for-the-old-server', 'the refused reply stays in the composer');
    assert.doesNotMatch(await tmux.history('%0'), /pending-for-the-old-server/, "the new server's %0, read by a client of its own, never got it");

    await page.getByRole('link', { name: 'drover' }).click();
    const card = page.getByRole('main').getByRole('link').first();
    await shows(card, 'cat');
    const fresh = (await world.call('/api/snapshot')).json as { server: { incarnation: string } };
    assert.equal(await card.getAttribute('href'), `#/pane/${encodeURIComponent(`local::tmux::${fresh.server.incarnation}::%0`)}`, 'the home lists the new server’s pane by its new key');
    assert.equal(await banner.isVisible(), true, 'the banner stays');
  });
});

describe('drover web in a real browser, while the tmux server is down', { skip: browserMissing }, () => {
  const teardown = suiteTeardown();
  after(() => teardown.run());

  it('says the multiplexer cannot be read instead of showing its old panes as live, and shows the panes again once a server answers', async () => {
    const { tmux, world, context, page } = await catOnRestartableServer(teardown);
    await page.getByRole('main').getByRole('link').first().click();
    await shows(page.locator('#pane-meta'), 'cat');
    const indicator = page.locator('header .live');
    await shows(indicator, /^live$/);
    const composer = page.getByRole('textbox', { name: 'Reply text' });
    await composer.fill('typed before the server went');

    await tmux.stop();
    const down = page.getByRole('region', { name: 'Multiplexer unreachable' });
    await shows(down, /^The tmux server cannot be read: .+\. No pane is shown and nothing can be sent until it answers again/);
    await shows(indicator, 'multiplexer unreachable');
    assert.equal(await composer.isDisabled(), true, 'no composer for a server that is not there');
    assert.equal(await composer.inputValue(), 'typed before the server went', 'what was typed is kept');
    assert.equal(await page.getByRole('complementary', { name: 'All panes' }).getByRole('link').count(), 0, 'the old panes are not listed as if they were there');

    // A page opened now says so too, rather than "Loading…" for ever.
    const fresh = await context.newPage();
    await fresh.goto(world.bridge.url);
    await shows(fresh.getByRole('region', { name: 'Multiplexer unreachable' }), 'The tmux server cannot be read');
    assert.doesNotMatch(await textOf(fresh.getByRole('main')), /Loading/);

    await tmux.start(['cat']);
    for (const shown of [page, fresh]) {
      await shown.getByRole('region', { name: 'Multiplexer unreachable' }).waitFor({ state: 'detached', timeout: 20_000 });
      await shows(shown.locator('header .live'), /^live$/);
    }
    await shows(fresh.getByRole('main').getByRole('link').first(), 'cat');
    assert.equal(await composer.inputValue(), 'typed before the server went', 'and kept when the composer comes back');
    assert.equal(await composer.isDisabled(), false);
  });
});

describe('drover web in a real browser, over herdr and zellij', { skip: browserMissing }, () => {
  const teardown = suiteTeardown();
  after(() => teardown.run());
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
    teardown.after(() => browser.close());
  });

  it('over zellij, one space: the layout is its tabs, with no space strip and no New space', async () => {
    const zellij = await openZellijWorld();
    teardown.after(() => zellij.close());
    const world = await startWebWorld(teardown, { mux: zellij.port, assets: PAGE_ASSETS });
    const context = await browser.newContext(DESKTOP);
    teardown.after(() => context.close());
    const page = await pairedPage(context, world.bridge);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Tabs' }).click();
    const main = page.getByRole('main');
    await main.getByRole('heading', { name: 'Tabs', level: 1 }).waitFor();
    await main.getByRole('heading', { name: '1: agents' }).waitFor();
    assert.deepEqual(await main.getByRole('heading', { level: 2 }).allTextContents(), ['1: agents', '2: scratch'], 'the tabs, with no space above them');
    assert.equal(await main.getByRole('button', { name: 'New space' }).count(), 0);
    const where = await main.locator('.card .agent').allTextContents();
    assert.ok(where.length > 0 && where.every((text) => !text.includes('›')), `a pane is placed by its tab alone: ${where.join(', ')}`);
  });

  it('over herdr with a second session: lists the sessions, marking the one shown', async () => {
    const herdr = await openHerdrWorld();
    teardown.after(() => herdr.close());
    mkdirSync(join(herdr.dir, 'sessions', 'review'), { recursive: true });
    const review = new FakeHerdrServer({ seed: 'empty' });
    await review.start(join(herdr.dir, 'sessions', 'review', 'herdr.sock'));
    teardown.after(() => review.stop());
    const world = await startWebWorld(teardown, { mux: herdr.port, assets: PAGE_ASSETS });
    const context = await browser.newContext(PHONE);
    teardown.after(() => context.close());
    const page = await pairedPage(context, world.bridge);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Spaces' }).click();
    const sessions = page.getByRole('list', { name: 'Sessions' });
    await sessions.waitFor();
    assert.deepEqual(await sessions.getByRole('listitem').allTextContents(), ['default (shown here)', 'review']);
    assert.equal(await sessions.getByRole('listitem').first().getAttribute('aria-current'), 'true');
    assert.equal(await page.getByRole('main').getByRole('button', { name: 'New space' }).count(), 1, 'herdr keeps many spaces: they stay');
  });
});
