/**
 * The README's picture of `drover web`, taken by hand (not part of the suite):
 *
 *   node dist/test/bridge/screenshot.js docs/web-dashboard.png
 *
 * A private tmux server runs the fake agent in four panes (one asking, one working, one that
 * just finished, one idle); the page is opened on a desktop viewport at the asking pane.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startBridge } from '../../src/bridge/index.js';
import { tmuxAgentCensus } from '../../src/cli/commands/web.js';
import { createMuxPort, TmuxAdapter, tmuxIds } from '../../src/mux/index.js';
import { FAKE_AGENT, HOOK_ARGV, screenShows } from '../panes/live.js';
import { startTestServer } from '../support/tmux.js';
import { launchChromium } from './chromium.js';
import { PAGE_ASSETS } from './support.js';

const output = resolve(process.argv[2] ?? 'docs/web-dashboard.png');
const tmux = await startTestServer();
const state = mkdtempSync(join(tmpdir(), 'drover-shot-'));
try {
  const hook = { DROVER_FAKE_AGENT_HOOK: JSON.stringify(HOOK_ARGV) };
  const first = await tmux.newSession({ name: 'project', width: 110, height: 28, command: ['node', FAKE_AGENT, '--busy-ms', '300'], env: hook, receipt: true });
  const agent = async (name: string, busyMs: number) => (await first.session.newWindow({ name, command: ['node', FAKE_AGENT, '--busy-ms', String(busyMs)], env: hook, receipt: true })).pane;
  const asking = first.pane;
  const working = await agent('tests', 600_000);
  const finishing = await agent('docs', 4000);
  await first.session.newWindow({ name: 'shell' });
  for (const pane of [asking, working, finishing]) await screenShows(pane, '╭');
  const port = createMuxPort(new TmuxAdapter({ server: tmux }));
  const bridge = await startBridge({ mux: port, stateDirectory: state, port: 0, assets: PAGE_ASSETS, census: tmuxAgentCensus(tmux, process.cwd()) });
  try {
    await port.renamePane(tmuxIds.pane(asking.id), 'api: refactor auth');
    await port.renamePane(tmuxIds.pane(working.id), 'test runner');
    await port.renamePane(tmuxIds.pane(finishing.id), 'docs writer');
    for (const [pane, text] of [
      [working, 'run the whole suite'],
      [finishing, 'update the changelog'],
      [asking, 'tidy the session code ask:menu'],
    ] as const) {
      await pane.sendText(text);
      await pane.sendKeys(['Enter']);
    }
    await screenShows(asking, 'Do you want to make this edit');
    await screenShows(finishing, 'Done.');
    await delay(1500);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
      await page.goto(`${bridge.url}#pair=${bridge.devices.createPairingCode().code}`);
      await page.getByRole('heading', { name: 'Agents' }).waitFor();
      await page.goto(`${bridge.url}#/pane/${encodeURIComponent(asking.id)}`);
      await page.getByRole('group', { name: 'Question' }).waitFor();
      await delay(500);
      await page.screenshot({ path: output });
      process.stdout.write(`${output}\n`);
    } finally {
      await browser.close();
    }
  } finally {
    await bridge.close();
    await port.close();
  }
} finally {
  await tmux.close();
  rmSync(state, { recursive: true, force: true });
}
