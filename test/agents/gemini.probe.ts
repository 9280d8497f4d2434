/**
 * Drives the real Gemini CLI through every screen drover must read and records each as a
 * fixture under test/fixtures/screens/gemini/<version>/. Run by hand when the pinned version
 * changes (not part of the suite), then review the fixtures and the rules' test:
 *   npx tsc -p tsconfig.json --outDir .build-gemini && node .build-gemini/test/agents/gemini.probe.js
 * Waits read plain screen text, not geminiRules, so a broken rule cannot shape the fixtures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Pane } from '../../src/tmux/index.js';
import { AGENT_VERSIONS } from './bed.js';
import { SLOW_MARKER, TOOL_MARKER } from './mock/server.js';
import { PROFILES } from './profiles/index.js';
import { has, lacks, paste, startFromShell, waitFor, withBed } from './probe.js';
import { recordScreenFixture } from './record.js';

const VERSION = AGENT_VERSIONS[PROFILES.gemini.packageName]!;
/** Gemini CLI's composer footer: present whenever the composer is. */
const FOOTER = /^ workspace \(\/directory\)/;




async function record(pane: Pane, name: string, phase: string, note: string): Promise<void> {
  // The agent redraws in bursts (spinner, cursor); let the frame settle before it is kept.
  await delay(600);
  await recordScreenFixture(pane, 'gemini', VERSION, name, { phase, note });
  process.stdout.write(`recorded ${name} (${phase})\n`);
}



const TRUST_QUESTION = /Do you trust the files in this folder\?/;

async function untrustedScreens(): Promise<void> {
  await withBed('gemini', false, async (bed) => {
    const pane = await startFromShell(bed, /[#$]$/);
    await waitFor(pane, 'the trust dialog', has(TRUST_QUESTION));
    await record(pane, 'trust-dialog', 'dialog', 'bed with trusted: false: the folder-trust dialog before the composer');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the shell after Escape', has(/Exiting since escape was pressed/));
    await record(pane, 'exited-trust-escape', 'exited', 'Escape at the trust dialog: Gemini CLI exits to the shell');
  });
}

async function unpreparedScreens(): Promise<void> {
  const noKey = 'env -u GEMINI_API_KEY -u GOOGLE_GEMINI_BASE_URL ';
  await withBed('gemini', true, async (bed) => {
    const pane = await startFromShell(bed, /[#$]$/, noKey);
    await waitFor(pane, 'the API key dialog', has(/Enter Gemini API Key/));
    await record(pane, 'key-dialog', 'dialog', 'settings select gemini-api-key but GEMINI_API_KEY is unset: the key entry dialog');
  });
  const freshHome = mkdtempSync(join(tmpdir(), 'drover-gemini-fresh-'));
  try {
    await withBed('gemini', true, async (bed) => {
      const pane = await startFromShell(bed, /[#$]$/, `${noKey}HOME=${freshHome} `);
      await waitFor(pane, 'the trust dialog of a fresh HOME', has(TRUST_QUESTION));
      await record(pane, 'first-start-trust', 'dialog', 'an empty HOME: the big banner and the folder-trust dialog come first');
      await pane.sendKeys(['Enter']);
      await waitFor(pane, 'the auth dialog', has(/How would you like to authenticate/));
      await record(pane, 'first-start', 'dialog', 'an empty HOME after trusting the folder: the "Get started" authentication choice');
    });
  } finally {
    rmSync(freshHome, { recursive: true, force: true });
  }
}

async function composerScreens(): Promise<void> {
  await withBed('gemini', true, async (bed) => {
    const pane = await startFromShell(bed, /[#$]$/);
    await waitFor(pane, 'the composer', has(FOOTER));
    await record(pane, 'idle-empty', 'composer', 'trusted bed, fresh start: the empty composer with its placeholder under the tips');

    const clear = async (): Promise<void> => {
      await pane.sendKeys(['C-c']);
      await waitFor(pane, 'the placeholder', has(/^ > {3}Type your message/));
      // A second C-c within 3 s of an armed one quits; let the arming lapse.
      await delay(3_200);
    };
    await pane.sendText('hello drover');
    await waitFor(pane, 'the draft', has(/^ > hello drover/));
    await record(pane, 'draft-single', 'composer', 'typed "hello drover", not submitted');
    await clear();

    await paste(pane, 'first line\nsecond line\nthird line');
    await waitFor(pane, 'the 3-line draft', has(/^ {3}third line/));
    await record(pane, 'draft-multiline', 'composer', 'bracketed paste of "first line\\nsecond line\\nthird line"');
    await clear();

    await paste(pane, 'x'.repeat(2000));
    await waitFor(pane, 'the paste placeholder', has(/\[Pasted Text: 2000 chars\]/));
    await record(pane, 'draft-paste-placeholder', 'composer', 'bracketed paste of 2000 "x": folded into [Pasted Text: 2000 chars]');
    await clear();

    // Typed, not pasted: longer than the input box's 10 rows, so it shows the last ones.
    const words = Array.from({ length: 300 }, (_, index) => `w${index}`).join(' ');
    await pane.sendText(`${words} endZ`);
    await waitFor(pane, 'the scrolled draft', has(/ endZ$/), 60_000);
    await record(pane, 'draft-scrolled', 'composer', `typed ${words.length + 5} characters: the composer scrolled to its last 10 rows`);
    await clear();

    await pane.sendText('@no');
    await waitFor(pane, 'the file completion', has(/^ notes\.txt/));
    await record(pane, 'completion-at', 'composer', 'typed "@no": the file completion menu under the composer');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the closed menu', lacks(/^ notes\.txt/));
    await clear();

    await pane.sendText('/');
    await waitFor(pane, 'the command menu', has(/^ \(1\/\d+\)/));
    await record(pane, 'completion-slash', 'composer', 'typed "/": the command menu under the composer');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the closed menu', lacks(/^ \(1\/\d+\)/));
    await clear();

    await pane.sendText('hello there');
    await delay(300);
    await pane.sendKeys(['Enter']);
    await bed.mock.waitForTurns('the first turn', (turns) => turns.length === 1);
    await waitFor(pane, 'the reply', has(/Received 11 characters\. Done\./));
    await waitFor(pane, 'the idle composer', has(/^ > {3}Type your message/));
    await record(pane, 'idle-after-reply', 'composer', 'after one exchange: the reply above, the empty composer below');

    await pane.sendText(`take your time ${SLOW_MARKER}`);
    await delay(300);
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the spinner', has(/\(esc to cancel, \d+s\)/));
    await record(pane, 'busy', 'busy', `a ${SLOW_MARKER} reply streaming: the spinner line above the empty composer`);
    await pane.sendText('next idea');
    await waitFor(pane, 'the typeahead', has(/^ > next idea/));
    await record(pane, 'busy-typeahead', 'busy', 'typed "next idea" while the turn runs: the composer takes it');
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the queued message', has(/Queued \(press ↑ to edit\):/));
    await record(pane, 'busy-queued', 'busy', 'Enter on typeahead while busy: the message is queued above the composer');
    await bed.mock.waitForTurns('the queued turn', (turns) => turns.length === 3, 60_000);
    await waitFor(pane, 'the idle composer', has(/Received 9 characters\. Done\./));

    await pane.sendText(`run it ${TOOL_MARKER}`);
    await delay(300);
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the permission prompt', has(/Allow execution of/));
    await record(pane, 'permission', 'permission', `a ${TOOL_MARKER} prompt: the shell tool approval box`);
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the tool result', has(/The command ran\./));
    await waitFor(pane, 'the idle composer', has(/^ > {3}Type your message/));

    await pane.sendKeys(['Escape']);
    await delay(100);
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the rewind dialog', lacks(FOOTER));
    await record(pane, 'rewind-dialog', 'dialog', 'Escape twice on an empty composer with history: the /rewind picker');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the composer', has(FOOTER));

    await pane.sendText('/model');
    await delay(300);
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the model dialog', lacks(FOOTER));
    await record(pane, 'model-dialog', 'dialog', '/model: the model picker');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the composer', has(FOOTER));

    await pane.sendText('/quit');
    await delay(300);
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the shell', has(/[#$]$/));
    await record(pane, 'exited', 'exited', '/quit: the shell prompt under what Gemini CLI left');
  });
}

await untrustedScreens();
await unpreparedScreens();
await composerScreens();
