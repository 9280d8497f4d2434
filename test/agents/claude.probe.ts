/**
 * Drives the real Claude Code through every screen drover must read and records each as a
 * fixture under test/fixtures/screens/claude/<version>/. Run by hand when the pinned version
 * changes (not part of the suite), then review the fixtures and the rules' test:
 *   npx tsc -p tsconfig.json --outDir .build-claude && node .build-claude/test/agents/claude.probe.js
 * Waits read plain screen text, not claudeRules, so a broken rule cannot shape the fixtures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Pane } from '../../src/tmux/index.js';
import { AGENT_VERSIONS, type AgentBed } from './bed.js';
import { SLOW_MARKER, TOOL_MARKER } from './mock/server.js';
import { PROFILES } from './profiles/index.js';
import { count, has, paste, startFromShell, waitFor, withBed } from './probe.js';
import { recordScreenFixture } from './record.js';

const VERSION = AGENT_VERSIONS[PROFILES.claude.packageName]!;
/** The empty composer's row: `❯` (its no-break space trimmed with the row). */
const EMPTY_COMPOSER = /^❯$/;
const SPINNER = /^[·✢✳✶✻✽*] \S+… \(/;
/** The row that closes a finished turn: `✻ Baked for 1s · done 12:27 PM`. */
const TURN_DONE = /^✻ \S+ for \d+s · done /;
const SHELL_PROMPT = /[#$]$/;



const emptyComposer = (lines: readonly string[]): boolean => has(EMPTY_COMPOSER)(lines) && !has(SPINNER)(lines);

async function record(pane: Pane, name: string, phase: string, note: string, settleMs = 500): Promise<void> {
  // Claude Code redraws a frame in several writes; let it settle before it is kept.
  await delay(settleMs);
  await recordScreenFixture(pane, 'claude', VERSION, name, { phase, note });
  process.stdout.write(`recorded ${name} (${phase})\n`);
}

/** Escape twice empties the composer (Escape twice on an empty one would open Rewind). */
async function clear(pane: Pane): Promise<void> {
  await pane.sendKeys(['Escape', 'Escape']);
  await waitFor(pane, 'the cleared composer', emptyComposer);
}

async function submit(bed: AgentBed, pane: Pane, text: string): Promise<void> {
  await paste(pane, text);
  const start = text.slice(0, 12).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await waitFor(pane, 'the pasted prompt', has(new RegExp(`^❯\\s${start}`)));
  await pane.sendKeys(['Enter']);
}


/** C-c twice: the first empties the composer and arms "Press Ctrl-C again to exit". */
async function quit(pane: Pane): Promise<void> {
  await pane.sendKeys(['C-c']);
  await delay(300);
  await pane.sendKeys(['C-c']);
  await waitFor(pane, 'the shell', has(SHELL_PROMPT));
}


async function untrustedScreens(): Promise<void> {
  await withBed('claude', false, async (bed) => {
    const pane = await startFromShell(bed, SHELL_PROMPT);
    await waitFor(pane, 'the trust dialog', has(/^ Accessing workspace:$/));
    await record(pane, 'trust-dialog', 'dialog', "bed with trusted: false: the folder-trust dialog at start; its default choice is 'No, exit', and Escape exits");
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'claude to refuse the folder', has(/^Claude Code didn't start because this folder isn't trusted\.$/));
  });
}

async function setupScreens(): Promise<void> {
  await withBed('claude', true, async (bed) => {
    let pane = await startFromShell(bed, SHELL_PROMPT, 'env ANTHROPIC_API_KEY=sk-ant-drover-probe-unapproved-key-0000 ');
    await waitFor(pane, 'the API key question', has(/^ {2}Do you want to use this API key\?$/));
    await record(pane, 'key-dialog', 'dialog', 'ANTHROPIC_API_KEY set to a key ~/.claude.json has not approved: Claude Code asks whether to use it (default No; Escape answers No)');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the composer', emptyComposer);
    await quit(pane);

    pane = await startFromShell(bed, SHELL_PROMPT, 'env -u ANTHROPIC_API_KEY ');
    await waitFor(pane, 'the composer', emptyComposer);
    await submit(bed, pane, 'hello without a key');
    await waitFor(pane, 'the login error', has(/Not logged in · Please run \/login$/));
    await record(pane, 'not-logged-in', 'composer', "onboarding done but no ANTHROPIC_API_KEY: no dialog at start; a prompt gets 'Not logged in · Please run /login' and a dim placeholder");
    await quit(pane);

    pane = await startFromShell(bed, SHELL_PROMPT, `env HOME=${join(bed.home, 'fresh-home')} `);
    await waitFor(pane, 'the connectivity error and the shell', (lines) => has(/^ Unable to connect to Anthropic services$/)(lines) && SHELL_PROMPT.test(lines.findLast((line) => line !== '') ?? ''));
    await record(pane, 'first-start', 'exited', 'a HOME without ~/.claude.json, offline: the first-run welcome checks connectivity to api.anthropic.com, fails and claude exits 1 before any onboarding screen');
  });
}

async function composerScreens(): Promise<void> {
  await withBed('claude', true, async (bed) => {
    // Forget the answer the profile gives, to record the question once.
    const statePath = join(bed.home, '.claude.json');
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as Record<string, unknown>;
    delete state.hasSeenAutoDefaultNudge;
    writeFileSync(statePath, JSON.stringify(state));
    const pane = await startFromShell(bed, SHELL_PROMPT);
    await waitFor(pane, 'the auto-mode question', has(/^ {2}Make auto mode your default permission mode\?$/));
    await record(pane, 'auto-mode-nudge', 'dialog', 'asked once when settings.json sets permissions.defaultMode to default (manual); the profile sets hasSeenAutoDefaultNudge; Escape declines');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the composer', emptyComposer);
    await record(pane, 'idle-empty', 'composer', "a fresh start with the bed's profile: the composer between two rules, the mode line below", 1500);

    await pane.sendText('a single draft line, not submitted');
    await waitFor(pane, 'the typed draft', has(/^❯\sa single draft line, not submitted$/));
    await record(pane, 'draft-single', 'composer', 'typed with send-keys -l, not submitted');
    await clear(pane);

    await paste(pane, 'first line of three\nsecond line\nthird line');
    await waitFor(pane, 'the three-line draft', has(/^ {2}third line$/));
    await record(pane, 'draft-multiline', 'composer', 'a 3-line bracketed paste, not submitted');
    await clear(pane);

    await paste(pane, 'p'.repeat(2000));
    await waitFor(pane, 'the paste placeholder', has(/^❯\s\[Pasted text #\d+\]$/));
    await record(pane, 'draft-paste-placeholder', 'composer', 'a 2000-character bracketed paste: pastes over 800 characters or 3 lines fold into a placeholder');
    await clear(pane);

    // Typed in pieces small enough not to count as a paste, so nothing folds.
    const words = Array.from({ length: 900 }, (_, index) => `word${index}`).join(' ');
    for (let at = 0; at < words.length; at += 50) await pane.sendText(words.slice(at, at + 50));
    await waitFor(pane, 'the scrolled composer', has(/^─── ↑ \d+ more ─+$/));
    await record(pane, 'draft-scrolled', 'composer', `${words.length} characters typed in 50-character pieces: the composer shows its last rows, the top rule counts the rows above`);
    await clear(pane);

    await pane.sendText('@no');
    await waitFor(pane, 'the file menu', has(/^ {4}\+ notes\.txt$/));
    await record(pane, 'completion-at', 'composer', 'typed @no: the file menu opens above the composer, nothing selected');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the menu closed, the text kept', (lines) => !has(/^ {4}\+ notes\.txt$/)(lines) && has(/^❯\s@no$/)(lines));
    await clear(pane);

    await pane.sendText('/');
    await waitFor(pane, 'the command menu', has(/^ {2}❯ \/\S+ {2,}/));
    await record(pane, 'completion-slash', 'composer', 'typed /: the command menu opens above the composer, its first entry selected');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the menu closed', (lines) => !has(/^ {2}❯ \/\S+ {2,}/)(lines) && has(/^❯\s\/$/)(lines));
    await clear(pane);

    await pane.sendText('?');
    await waitFor(pane, 'the shortcuts', has(/esc esc to clear input/));
    await record(pane, 'shortcuts-help', 'composer', '? on an empty composer: the shortcuts replace the mode line (the ? is not typed)');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the mode line', has(/\? for shortcuts/));

    await paste(pane, '!echo not a shell');
    await waitFor(pane, 'shell mode', has(/^!\secho not a shell$/));
    await record(pane, 'shell-mode', 'composer', "a bracketed paste of '!echo not a shell': the leading ! switches the composer to shell mode");
    await pane.sendKeys(['Escape', 'Escape']);
    await waitFor(pane, 'the empty shell-mode composer', has(/^!$/));
    await pane.sendKeys(['BSpace']);
    await waitFor(pane, 'the composer', emptyComposer);

    await submit(bed, pane, 'short pasted line');
    await waitFor(pane, 'the turn to end', (lines) => count(TURN_DONE)(lines) === 1 && emptyComposer(lines));
    await record(pane, 'idle-after-reply', 'composer', 'after one finished exchange: the composer is empty');

    await pane.sendKeys(['Escape', 'Escape']);
    await waitFor(pane, 'the Rewind menu', has(/^ {2}Rewind$/));
    await record(pane, 'rewind-menu', 'dialog', 'Escape twice on an EMPTY composer after a reply opens the Rewind menu (Escape closes it)');
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the composer', emptyComposer);

    await submit(bed, pane, `please answer slowly ${SLOW_MARKER}`);
    await waitFor(pane, 'the spinner', has(SPINNER));
    await record(pane, 'busy', 'busy', `${SLOW_MARKER}: the spinner above the empty composer, esc to interrupt in the mode line`, 1000);
    await pane.sendText('typed while busy');
    await waitFor(pane, 'the typeahead', has(/^❯\styped while busy$/));
    await record(pane, 'busy-typeahead', 'busy', 'typed during the turn: the composer takes it as a draft, the spinner runs on');
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the queued prompt', has(/Queued · /));
    await record(pane, 'busy-queued', 'busy', 'Enter on the typeahead during the turn: the prompt waits as a queued message; it is sent as its own turn after this one');
    await waitFor(pane, 'both turns to end', (lines) => count(TURN_DONE)(lines) === 3 && emptyComposer(lines), 60_000);

    await submit(bed, pane, `slow again ${SLOW_MARKER}`);
    await waitFor(pane, 'the spinner', has(SPINNER));
    await pane.sendKeys(['Escape']);
    await waitFor(pane, 'the interrupt', (lines) => has(/Interrupted · What should Claude do instead\?$/)(lines) && emptyComposer(lines));
    await record(pane, 'interrupted', 'composer', 'Escape during the turn: it stops, the transcript says Interrupted, the composer is back');

    await submit(bed, pane, `run the tool ${TOOL_MARKER}`);
    await waitFor(pane, 'the permission prompt', has(/^ Do you want to proceed\?$/));
    await record(pane, 'permission', 'permission', `${TOOL_MARKER}: the mock's Bash call; the profile's ask rule makes Claude Code ask (Escape rejects it and ends the turn)`);
    await pane.sendKeys(['1']);
    await waitFor(pane, 'the turn to end', (lines) => has(/^● The command ran\.$/)(lines) && emptyComposer(lines));

    await pane.sendText('/exit');
    await waitFor(pane, 'the command menu', has(/^ {2}❯ \/exit/));
    await pane.sendKeys(['Enter']);
    await waitFor(pane, 'the shell', (lines) => has(/^Resume this session with:$/)(lines) && has(SHELL_PROMPT)(lines));
    await record(pane, 'exited', 'exited', 'claude run from the shell, then /exit: the alternate screen is gone; the shell prompt follows the resume hint');
  });
}

await untrustedScreens();
await setupScreens();
await composerScreens();
