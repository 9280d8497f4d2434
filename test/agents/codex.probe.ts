/**
 * Drives the real Codex CLI through every screen drover must read and records each as a
 * fixture under test/fixtures/screens/codex/<version>/. Run by hand when the pinned version
 * changes (not part of the suite), then review the fixtures and the rules' test:
 *   npx tsc -p tsconfig.json --outDir .build-codex && node .build-codex/test/agents/codex.probe.js
 * Waits read plain screen text, not codexRules, so a broken rule cannot shape the fixtures.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Pane } from '../../src/tmux/index.js';
import { AGENT_VERSIONS, type AgentBed } from './bed.js';
import { SLOW_MARKER, TOOL_MARKER } from './mock/server.js';
import { PROFILES } from './profiles/index.js';
import { count, has, paste, startFromShell, waitFor, withBed } from './probe.js';
import { recordScreenFixture } from './record.js';

const VERSION = AGENT_VERSIONS[PROFILES.codex.packageName]!;
/** The composer's prompt row and its placeholder. */
const EMPTY_COMPOSER = /^› Ask Codex to do anything$/;
/** The dim row that closes a finished turn in the transcript. */
const TURN_DONE = /^ {2}Worked for .+ • \d\d:\d\d$/;
const SHELL_PROMPT = /[#$]$/;




async function record(pane: Pane, name: string, phase: string, note: string, settleMs = 500): Promise<void> {
  // Codex redraws in bursts (typewriter text, cursor); let the frame settle before it is kept.
  await delay(settleMs);
  await recordScreenFixture(pane, 'codex', VERSION, name, { phase, note });
  process.stdout.write(`recorded ${name} (${phase})\n`);
}



/**
 * A CODEX_HOME beside the bed's own, from its config with `edit` applied (or empty). Codex
 * starts a shared background server unless told not to, and that server outlives the bed:
 * every start here passes --no-daemon.
 */
function sideHome(bed: AgentBed, name: string, edit?: (config: string) => string): string {
  const dir = join(bed.home, name);
  mkdirSync(dir, { recursive: true });
  if (edit !== undefined) writeFileSync(join(dir, 'config.toml'), edit(readFileSync(join(bed.home, '.codex', 'config.toml'), 'utf8')));
  return dir;
}

async function untrustedScreens(): Promise<void> {
  await withBed('codex', false, async (bed) => {
    const pane = await startFromShell(bed, SHELL_PROMPT);
    await waitFor(pane, 'the trust dialog', has(/^ {2}Trust this folder\?/));
    await record(pane, 'trust-dialog', 'dialog', 'bed with trusted: false: the folder-trust dialog before the composer');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the agent command center', has(/^ {2}Agent command center/));
    await record(pane, 'agent-command-center', 'dialog', 'Escape at the trust dialog ("esc back"): the agent command center; Left on an empty composer opens it too');
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the shell', has(SHELL_PROMPT));
  });
}

async function unpreparedScreens(): Promise<void> {
  await withBed('codex', true, async (bed) => {
    const fresh = sideHome(bed, 'fresh-codex-home');
    let pane = await startFromShell(bed, SHELL_PROMPT, `env CODEX_HOME=${fresh} `, ' --no-daemon');
    await waitFor(pane, 'the sign-in choice', has(/^> 1\. Sign in with ChatGPT/));
    await record(pane, 'first-start', 'dialog', 'an empty CODEX_HOME: the welcome screen asks how to sign in');
    await pane.sendKeys(['Down', 'Down', 'Enter']);
    await waitFor(pane, 'the other sign-in methods', has(/^> 1\. Use an OpenAI API key/));
    await record(pane, 'login-other', 'dialog', 'first-start, then "3. Sign in another way": API key or Amazon Bedrock');
    // An Enter too soon after the screen appeared is lost.
    await delay(1000);
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the API key box', has(/^│Paste or type your API key/));
    await record(pane, 'key-dialog', 'dialog', 'first-start, "Sign in another way", "Use an OpenAI API key": the API key entry box');
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the shell', has(SHELL_PROMPT));

    const legacy = sideHome(bed, 'legacy-model-home', (config) => config.replace(/^model = .*$/m, 'model = "gpt-5.5"'));
    pane = await startFromShell(bed, SHELL_PROMPT, `env CODEX_HOME=${legacy} `, ' --no-daemon');
    await waitFor(pane, 'the model migration notice', has(/^› 1\. Try new model/));
    await record(pane, 'model-migration', 'dialog', 'config names gpt-5.5, which this version migrates: "Meet GPT-6 Sol" asks to switch');
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the shell', has(SHELL_PROMPT));
  });
}

async function composerScreens(): Promise<void> {
  await withBed('codex', true, async (bed) => {
    const pane = await startFromShell(bed, SHELL_PROMPT);
    await waitFor(pane, 'the composer', has(EMPTY_COMPOSER));
    await record(pane, 'idle-empty', 'composer', 'a fresh start in a trusted project: the logo, the empty composer and its placeholder', 1500);

    await pane.sendText('hello from drover');
    await waitFor(pane, 'the typed draft', has(/^› hello from drover$/));
    await record(pane, 'draft-single', 'composer', 'typed with send-keys -l, not submitted');
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the cleared composer', has(EMPTY_COMPOSER));

    await paste(pane, 'first line\nsecond line\nthird line');
    await waitFor(pane, 'the three-line draft', has(/^ {2}third line$/));
    await record(pane, 'draft-multiline', 'composer', 'a three-line bracketed paste, not submitted');
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the cleared composer', has(EMPTY_COMPOSER));

    await paste(pane, 'p'.repeat(2000));
    await waitFor(pane, 'the paste placeholder', has(/^› \[Pasted Content 2000 chars\]$/));
    await record(pane, 'draft-paste-placeholder', 'composer', 'a 2000-character bracketed paste: pastes over 1000 characters fold into a placeholder');
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the cleared composer', has(EMPTY_COMPOSER));

    await paste(pane, 'w'.repeat(300));
    await waitFor(pane, 'the wrapped draft', has(/^ {2}w+$/));
    await record(pane, 'draft-wrapped', 'composer', 'a 300-character paste (under the placeholder size) wraps over three rows');
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the cleared composer', has(EMPTY_COMPOSER));

    await pane.sendText('@no');
    await waitFor(pane, 'the mentions popup', has(/^ {2}enter\/tab insert · esc close/));
    await record(pane, 'completion-at', 'composer', 'typed "@no": the mentions popup above the composer');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the popup closed', (lines) => !has(/esc close/)(lines) && has(/^› @no$/)(lines));
    await pane.sendKeys(['C-c']);

    await pane.sendText('/');
    await waitFor(pane, 'the command popup', has(/^ {2}\/permissions {2,}/));
    await record(pane, 'completion-slash', 'composer', 'typed "/": the slash-command popup above the composer');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the popup closed', (lines) => !has(/^ {2}\/permissions {2,}/)(lines) && has(/^› \/$/)(lines));
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the cleared composer', has(EMPTY_COMPOSER));

    await pane.sendKeys(['F2']);
    await waitFor(pane, 'the warnings panel', has(/^ {2}Warnings · 1 of/));
    await record(pane, 'warnings', 'dialog', 'F2 ("⚠ 1 warning · f2 to view"): the startup warnings panel over the composer');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the composer again', has(EMPTY_COMPOSER));

    await paste(pane, `a slow answer please ${SLOW_MARKER}`);
    await waitFor(pane, 'the pasted prompt', has(/^› a slow answer please/));
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the reply streaming', has(/^• Rec/));
    await record(pane, 'busy', 'busy', `${SLOW_MARKER}: the reply streams in; Codex hides its "Working" status row while text streams`, 300);

    await pane.sendText('typed ahead');
    await waitFor(pane, 'the typeahead draft', has(/^ {2}tab to queue message$/));
    await record(pane, 'busy-typeahead', 'busy', 'typed while the reply streams: the draft, and "tab to queue message" in the footer', 300);
    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the turn to end', (lines) => count(TURN_DONE)(lines) === 1, 40_000);
    await record(pane, 'idle-after-reply', 'composer', 'after the slow reply (the typeahead cleared with C-c): the transcript and an empty composer');

    await paste(pane, `run the tool ${TOOL_MARKER}`);
    await waitFor(pane, 'the pasted prompt', has(/^› run the tool/));
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the approval prompt', has(/^ {2}Would you like to run the following command\?$/));
    await record(pane, 'permission', 'permission', `${TOOL_MARKER}: the mock asks to run a command outside the sandbox; Codex asks first`);
    await pane.sendKeys(['y']);
    await waitFor(pane, 'the turn to end', (lines) => count(TURN_DONE)(lines) === 2, 30_000);

    await paste(pane, `think first ${SLOW_MARKER}`);
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the reply streaming', has(/^• Rec/));
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the interrupt notice', has(/^■ Conversation interrupted/));
    await record(pane, 'idle-after-interrupt', 'composer', 'Escape while the reply streams: the turn is interrupted, the composer is back');

    await pane.sendKeys(['C-c']);
    await waitFor(pane, 'the shell', has(/^ {2}codex resume /));
    await record(pane, 'exited', 'exited', 'C-c on the empty composer: Codex quits at once, leaving its token usage, how to resume, and the shell prompt');
  });
}

await untrustedScreens();
await unpreparedScreens();
await composerScreens();
