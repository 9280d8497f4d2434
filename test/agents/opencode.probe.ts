/**
 * Drives the real opencode through the screens drover reads and records each one as a fixture
 * (test/fixtures/screens/opencode/<version>/), checking every submitted prompt against the
 * mock's turn log. Run by hand after a new opencode version is pinned and installed:
 *
 *   npx tsc -p tsconfig.json --outDir .build-probe && node .build-probe/test/agents/opencode.probe.js
 *
 * Screens that need another HOME are recorded by hand, as their notes say: first-start (no
 * config at all), key-dialog (a config enabling only a provider without a key), dialog-connect
 * and dialog-api-key (/connect in the first).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { opencodeRules } from '../../src/agents/screens/opencode.js';
import type { AgentScreen, ScreenPhase } from '../../src/agents/screens/types.js';
import type { Pane } from '../../src/tmux/index.js';
import { AGENT_VERSIONS, findAgentBinary, startAgentBed, type AgentBed } from './bed.js';
import { SLOW_MARKER, TOOL_MARKER } from './mock/server.js';
import { captureAgentScreen, recordScreenFixture } from './record.js';

const VERSION = AGENT_VERSIONS['opencode-ai']!;

async function screenOf(pane: Pane): Promise<AgentScreen> {
  return (await captureAgentScreen(pane)).screen;
}

/** Polls the pane until the rules read `phase` (and `extra` holds), or fails naming `what`. */
async function waitForPhase(pane: Pane, what: string, phase: ScreenPhase, extra: (screen: AgentScreen) => boolean = () => true, timeoutMs = 30_000): Promise<AgentScreen> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const screen = await screenOf(pane);
    if (opencodeRules.read(screen).phase === phase && extra(screen)) return screen;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen reads ${JSON.stringify(opencodeRules.read(screen))}:\n${screen.lines.join('\n')}`);
    await delay(100);
  }
}

const composerText = (screen: AgentScreen): string | undefined => opencodeRules.read(screen).composer?.text;

/** Bracketed paste through a uniquely named buffer, as drover delivers. */
async function paste(bed: AgentBed, pane: Pane, text: string): Promise<void> {
  const buffer = `drover-probe-${randomUUID()}`;
  await bed.server.command(['load-buffer', '-b', buffer, '-'], { input: Buffer.from(text) });
  await pane.paste(buffer, { delete: true, bracketed: true });
}

async function main(): Promise<void> {
  const bed = await startAgentBed('opencode');
  const [pane] = await bed.server.listPanes();
  assert.ok(pane !== undefined);
  const record = async (name: string, phase: ScreenPhase, note: string): Promise<void> => {
    await recordScreenFixture(pane, 'opencode', VERSION, name, { phase, note });
    const reading = opencodeRules.read(await screenOf(pane));
    process.stdout.write(`${name}: ${reading.phase} ${reading.rule} ${JSON.stringify(reading.composer?.text ?? null)}\n`);
  };
  const submitted = async (text: string): Promise<void> => {
    const before = bed.mock.turns().length;
    const turns = await bed.mock.waitForTurns(`the turn ${JSON.stringify(text.slice(0, 40))}`, (all) => all.length > before);
    assert.equal(turns.length, before + 1, 'one prompt, one turn');
    assert.equal(turns.at(-1)!.text, text);
  };
  try {
    // Not `exec`: the exited screen is the shell the agent returns to. The login shell's
    // /etc/profile resets PATH, hence the binary's full path.
    await pane.sendText(`${findAgentBinary(bed.profile)!}`);
    await pane.sendKeys(['Enter']);
    await waitForPhase(pane, 'the home screen', 'composer', undefined, 60_000);
    await record('idle-empty', 'composer', 'Fresh start in a prepared HOME: the home screen, logo above the composer, whose muted placeholder is a suggestion.');

    await paste(bed, pane, 'fix the failing test in src/app.ts');
    await waitForPhase(pane, 'the pasted line', 'composer', (screen) => composerText(screen) === 'fix the failing test in src/app.ts');
    await record('draft-single', 'composer', 'One line pasted (bracketed) on the home screen, not submitted.');
    await pane.sendKeys(['C-c']);
    await waitForPhase(pane, 'an empty composer', 'composer', (screen) => composerText(screen) === '');

    for (const [index, line] of ['first line of the draft', 'second line', 'third line'].entries()) {
      if (index > 0) await pane.sendKeys(['C-j']);
      await pane.sendText(line);
    }
    await waitForPhase(pane, 'the 3-line draft', 'composer', (screen) => composerText(screen) === 'first line of the draft\nsecond line\nthird line');
    await record('draft-multiline', 'composer', 'Three lines typed, C-j between them (a newline, not a submit).');
    await pane.sendKeys(['C-c']);
    await waitForPhase(pane, 'an empty composer', 'composer', (screen) => composerText(screen) === '');

    await paste(bed, pane, 'line one\nline two\nline three');
    await waitForPhase(pane, 'the paste placeholder', 'composer', (screen) => composerText(screen)?.startsWith('[Pasted ~3 lines]') === true);
    await record('draft-paste-placeholder', 'composer', 'A 3-line bracketed paste: opencode folds a paste of 3+ lines or over 150 characters into "[Pasted ~N lines]" followed by a space.');
    await pane.sendKeys(['C-c']);
    await waitForPhase(pane, 'an empty composer', 'composer', (screen) => composerText(screen) === '');

    const long = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ').repeat(6);
    await pane.sendText(long);
    // opencode handles typed text one key at a time: 1 400 characters take it many seconds.
    await waitForPhase(pane, 'the long draft', 'composer', (screen) => opencodeRules.composerShows(composerText(screen) ?? '', long), 180_000);
    await record('draft-long', 'composer', `${long.length} characters typed (send-keys -l): the composer grows to its height limit and shows the end of the text.`);
    await pane.sendKeys(['C-c']);
    await waitForPhase(pane, 'an empty composer', 'composer', (screen) => composerText(screen) === '');

    await pane.sendText('@no');
    await waitForPhase(pane, 'the file completion', 'composer', (screen) => opencodeRules.read(screen).completion && screen.lines.some((line) => line.includes('notes.txt')));
    await record('completion-at', 'composer', 'Typed "@no": the completion menu (agents, then matching files) opens above the composer.');
    await pane.sendKeys(['Escape']);
    await waitForPhase(pane, 'the closed completion', 'composer', (screen) => !opencodeRules.read(screen).completion && composerText(screen) === '@no');
    await pane.sendKeys(['C-c']);
    await waitForPhase(pane, 'an empty composer', 'composer', (screen) => composerText(screen) === '');

    await pane.sendText('/');
    await waitForPhase(pane, 'the command completion', 'composer', (screen) => opencodeRules.read(screen).completion);
    await record('completion-slash', 'composer', 'Typed "/": the command menu opens above the composer.');
    // Unlike the @ menu, hiding the / menu deletes the command typed so far.
    await pane.sendKeys(['Escape']);
    await waitForPhase(pane, 'the closed completion', 'composer', (screen) => !opencodeRules.read(screen).completion && composerText(screen) === '');

    const slow = `Answer slowly please ${SLOW_MARKER}`;
    await paste(bed, pane, slow);
    await pane.sendKeys(['Enter']);
    await waitForPhase(pane, 'the slow turn', 'busy');
    await submitted(slow);
    await delay(1500);
    await record('busy', 'busy', `${SLOW_MARKER} prompt submitted: the reply streams for 20 s; the bottom bar shows the spinner and "esc interrupt".`);
    await pane.sendText('typed while busy');
    await waitForPhase(pane, 'the typeahead', 'busy', (screen) => composerText(screen) === 'typed while busy');
    await record('busy-typeahead', 'busy', 'Text typed while the slow turn runs: the composer takes it.');
    await pane.sendKeys(['C-c']);
    await waitForPhase(pane, 'the typeahead cleared, the turn still running', 'busy', (screen) => composerText(screen) === '');
    const queued = 'queued while busy';
    await pane.sendText(queued);
    await waitForPhase(pane, 'the second typeahead', 'busy', (screen) => composerText(screen) === queued);
    await pane.sendKeys(['Enter']);
    await waitForPhase(pane, 'the queued prompt', 'busy', (screen) => composerText(screen) === '' && screen.lines.some((line) => line.includes('QUEUED')));
    await record('busy-queued', 'busy', 'Enter on the typeahead while the slow turn runs: opencode queues it as a user message marked QUEUED at the end of the transcript and sends it when the turn ends.');
    await submitted(queued);
    await waitForPhase(pane, 'the end of both turns', 'composer', (screen) => composerText(screen) === '', 40_000);
    await record('idle-after-reply', 'composer', 'Both turns finished: the replies in the transcript, the composer empty below them.');

    const tool = `Please run the command ${TOOL_MARKER}`;
    await paste(bed, pane, tool);
    await pane.sendKeys(['Enter']);
    await submitted(tool);
    await waitForPhase(pane, 'the permission prompt', 'permission');
    await record('permission', 'permission', `${TOOL_MARKER} prompt: the mock asks for a bash call, which the bed's "permission": {"bash": "ask"} makes opencode ask about.`);
    await pane.sendKeys(['Enter']);
    await waitForPhase(pane, 'the end of the tool turn', 'composer', (screen) => screen.lines.some((line) => line.includes('The command ran.')));

    await pane.sendKeys(['C-p']);
    await waitForPhase(pane, 'the command palette', 'dialog');
    await record('dialog-commands', 'dialog', 'ctrl+p on an idle composer: the command palette.');
    await pane.sendKeys(['Escape']);
    await waitForPhase(pane, 'the composer again', 'composer');

    await pane.sendText('/models');
    await pane.sendKeys(['Enter']);
    await waitForPhase(pane, 'the model picker', 'dialog');
    await record('dialog-models', 'dialog', '"/models" and Enter: the model picker.');
    await pane.sendKeys(['Escape']);
    await waitForPhase(pane, 'the composer again', 'composer', (screen) => composerText(screen) === '');

    await pane.sendKeys(['C-c']);
    await waitForPhase(pane, 'the shell', 'exited');
    await record('exited', 'exited', 'C-c on the empty composer quits at once; opencode leaves its logo and a "Continue  opencode -s <session>" line above the shell prompt.');
  } finally {
    await bed.close();
  }
}

await main();
