/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The page for a person on a phone and at a desk, in a real browser: each row says which pane
 * it is and what it is doing (agent, repo and branch, how long since it changed, its last line),
 * the mirror wraps long rows on a phone, axe-core finds no serious or critical violation on any
 * page (pairing, home, a pane, the fleet inbox), and the keyboard alone reaches every action.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Bridge } from '../../src/bridge/index.js';
import { createMember } from '../../src/fleet/index.js';
import { createMuxPort, TmuxAdapter } from '../../src/mux/index.js';
import type { Pane } from '../../src/tmux/index.js';
import { tmuxFleet, type TmuxFleet } from '../fleet/support.js';
import { FAKE_AGENT, screenShows } from '../panes/live.js';
import { git } from '../support/git.js';
import { eventually } from '../support/wait.js';
import { CHROMIUM, DESKTOP, launchChromium, PHONE, seriousViolations } from './chromium.js';
import { PAGE_ASSETS, startWebWorld, suiteTeardown } from './support.js';

/** What has the keyboard focus: its tag and where it goes (a link) or its name (rows' ages change as Tab moves). */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (element === null || element === document.body) return '';
    return `${element.tagName.toLowerCase()}:${element.getAttribute('href') ?? element.getAttribute('aria-label') ?? element.textContent?.trim() ?? ''}`;
  });
}

/** Every enabled link, button and field of the page, described as `focused` describes one. */
function actions(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled])')]
      .filter((element) => element.offsetParent !== null)
      .map((element) => `${element.tagName.toLowerCase()}:${element.getAttribute('href') ?? element.getAttribute('aria-label') ?? element.textContent?.trim() ?? ''}`),
  );
}

/** Presses Tab `presses` times at a person's pace, returning every element the focus reached. */
async function tabThrough(page: Page, presses: number): Promise<Set<string>> {
  const reached = new Set<string>();
  for (let press = 0; press < presses; press += 1) {
    await page.keyboard.press('Tab');
    await delay(120);
    reached.add(await focused(page));
  }
  return reached;
}

async function pairedPage(context: BrowserContext, bridge: Bridge): Promise<Page> {
  const page = await context.newPage();
  const { code } = bridge.devices.createPairingCode();
  await page.goto(`${bridge.url}#pair=${code}`);
  await page.getByRole('heading', { name: 'Agents' }).waitFor();
  return page;
}

const browserMissing = existsSync(CHROMIUM) ? false : `chromium is not installed at ${CHROMIUM} (apt-get install -y chromium)`;
if (browserMissing && process.env.CI === 'true') throw new Error(`${browserMissing}; CI must run the browser tests`);

describe('drover web for a person on a phone and at a desk', { concurrency: 1, skip: browserMissing }, () => {
  const teardown = suiteTeardown();
  after(() => teardown.run());
  let fleet: TmuxFleet;
  let bridge: Bridge;
  let browser: Browser;
  let repoPane: Pane;

  before(async () => {
    fleet = await tmuxFleet(teardown);
    const repo = join(fleet.dir, 'shop');
    mkdirSync(repo);
    await git('init', '-q', '-b', 'checkout-flow', repo);
    const session = fleet.server.session((await fleet.server.pane(fleet.director).display('#{session_id}')).toString('utf8').trim());
    repoPane = (await session.newWindow({ name: 'work', cwd: repo, command: ['sh', '-c', 'printf "building the cart\\n"; exec cat'], receipt: true })).pane;
    await session.newWindow({ name: 'wide', command: ['sh', '-c', `printf '%s\\n' "${'wide-'.repeat(60)}end"; exec cat`] });
    const agent = (await session.newWindow({ name: 'agent', command: ['node', FAKE_AGENT, '--busy-ms', '200'], receipt: true })).pane;
    await screenShows(agent, '╭');
    await screenShows(repoPane, 'building the cart');
    // A message waiting in the Director's inbox, so the fleet page has its acknowledge buttons.
    const alice = await createMember(fleet.runtime, { fleetId: fleet.fleetId, name: 'alice', cwd: fleet.dir });
    await fleet.broker.sendMessage({ from: alice.member.memberId, to: fleet.directorId, text: 'review ready' });
    const port = createMuxPort(new TmuxAdapter({ server: fleet.server }));
    teardown.after(() => port.close());
    bridge = (await startWebWorld(teardown, { mux: port, fleet: fleet.runtime, assets: PAGE_ASSETS })).bridge;
    browser = await launchChromium();
    teardown.after(() => browser.close());
  });

  it('says on each row which pane it is and what it is doing: program, repo and branch, last change, last line', async () => {
    const context = await browser.newContext(PHONE);
    try {
      const page = await pairedPage(context, bridge);
      const card = page.getByRole('main').getByRole('link').filter({ hasText: '› work' });
      await eventually('the row of the pane in the repo', async () => ((await card.textContent()) ?? '').includes('shop · checkout-flow'));
      await eventually('its last line', async () => ((await card.textContent()) ?? '').includes('building the cart'));
      await repoPane.sendText('totals checked');
      await repoPane.sendKeys(['Enter']);
      await eventually('the row to carry the new last line and when it changed', async () => {
        const text = (await card.textContent()) ?? '';
        return text.includes('totals checked') && /changed (just now|\d+ s ago)/.test(text);
      });
    } finally {
      await context.close();
    }
  });

  it('wraps a long row of the mirror on a phone, and keeps the pane’s rows at a desk', async () => {
    for (const [device, wraps] of [
      [PHONE, true],
      [DESKTOP, false],
    ] as const) {
      const context = await browser.newContext(device);
      try {
        const page = await pairedPage(context, bridge);
        await page.getByRole('main').getByRole('link').filter({ hasText: '› wide' }).first().click();
        const mirror = page.getByRole('region', { name: 'Pane screen' });
        await eventually('the wide line in the mirror', async () => ((await mirror.textContent()) ?? '').includes('wide-wide-'));
        const overflow = await mirror.evaluate((element) => element.scrollWidth - element.clientWidth);
        if (wraps) assert.ok(overflow <= 1, `the phone's mirror scrolls sideways by ${overflow}px`);
        else assert.ok(overflow > 1, 'a desk shows the pane’s rows unwrapped, scrolling sideways');
      } finally {
        await context.close();
      }
    }
  });

  it('has no serious or critical axe-core violation on the pairing page, home, a pane and the fleet inbox', async () => {
    for (const device of [PHONE, DESKTOP]) {
      const context = await browser.newContext(device);
      try {
        const unpaired = await context.newPage();
        await unpaired.goto(bridge.url);
        await unpaired.getByRole('form', { name: 'Pair this browser' }).waitFor();
        assert.deepEqual(await seriousViolations(unpaired), [], 'pairing');
        await unpaired.close();

        const page = await pairedPage(context, bridge);
        await page.getByRole('main').getByRole('link').filter({ hasText: '› work' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'home');
        await page.getByRole('main').getByRole('link').filter({ hasText: '› agent' }).first().click();
        await page.getByRole('region', { name: 'Pane screen' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'a pane');
        await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Fleet' }).click();
        await page.getByRole('list', { name: 'Inbox' }).getByRole('button', { name: /^Ack message/ }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'the fleet inbox');
      } finally {
        await context.close();
      }
    }
  });

  it('reaches every action with the keyboard alone, on home, a pane and the fleet', async () => {
    const context = await browser.newContext(DESKTOP);
    try {
      const page = await pairedPage(context, bridge);
      await page.getByRole('main').getByRole('link').filter({ hasText: '› work' }).waitFor();
      for (const where of ['home', 'pane', 'fleet'] as const) {
        if (where === 'pane') {
          await page.getByRole('main').getByRole('link').filter({ hasText: '› agent' }).first().focus();
          await page.keyboard.press('Enter');
          await page.getByRole('region', { name: 'Pane screen' }).waitFor();
        }
        if (where === 'fleet') {
          await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Fleet' }).focus();
          await page.keyboard.press('Enter');
          await page.getByRole('list', { name: 'Inbox' }).getByRole('button', { name: /^Ack message/ }).waitFor();
        }
        const wanted = await actions(page);
        assert.ok(wanted.length > 3, `${where} has actions to reach`);
        // Twice round the page: the focus must come to each action without a pointer, while a
        // pane keeps printing and the rows are redrawn under it.
        let lines = 0;
        const printing = setInterval(() => void repoPane.sendText(`line ${(lines += 1)}\n`).catch(() => undefined), 300);
        const reached = await tabThrough(page, 2 * wanted.length + 4).finally(() => clearInterval(printing));
        const missed = wanted.filter((action) => !reached.has(action));
        assert.deepEqual(missed, [], `${where}: actions Tab never reached`);
        if (where === 'home') {
          // A redraw keeps the focus where it was, so a screen reader is not thrown back to the top.
          const card = page.getByRole('main').getByRole('link').filter({ hasText: '› work' });
          await card.focus();
          const before = await focused(page);
          const marker = `redraw ${Date.now()}`;
          await repoPane.sendText(`${marker}\n`);
          await eventually('the row to be redrawn with the new line', async () => ((await card.textContent()) ?? '').includes(marker));
          assert.equal(await focused(page), before);
        }
      }
    } finally {
      await context.close();
    }
  });
});
