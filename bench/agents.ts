/**
 * Prompt delivery into the real agents: for each installed agent (Claude Code, Codex, Gemini
 * CLI, opencode), 20 prompts of mixed shape delivered by drover (`paneDeliver`: paste,
 * composer check, evidence) and by the naive way most orchestrators type (`send-keys -l TEXT`
 * then `send-keys Enter`), each into a fresh agent pane of its own bed. The model mock's log
 * is the judge: a prompt is intact when exactly one user turn carries it byte for byte. Time
 * is from the call to the turn's arrival at the mock (the mock stamps each request when its body is in).
 *
 * `npm run bench agents [AGENT…]` (default: every installed agent).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { paneDeliver } from '../src/panes/index.js';
import { findAgentBinary, startAgentBed, type AgentBed, type AgentName } from '../test/agents/bed.js';
import type { Turn } from '../test/agents/mock/server.js';
import { PROFILES } from '../test/agents/profiles/index.js';
import { arrivals, longText, openAgent, readyBecomes } from '../test/agents/scenario.js';
import { log, median, percentile, round } from './support.js';

const AGENTS: readonly AgentName[] = ['claude', 'codex', 'gemini', 'opencode'];
const ROUNDS = 4;
/** How long one prompt may take to reach the mock before it counts as lost. */
const ARRIVAL_TIMEOUT_MS = 20_000;

/** Five shapes, four rounds: each prompt unique, so an arrival names the prompt it came from. */
function prompts(): string[] {
  const shapes = (round: number): string[] => [
    `Round ${round}: say hello in one word.`,
    `Round ${round}: naïve "double" 'single' — ✓ 日本語 🎉 $HOME \`tick\``,
    `Round ${round}: summarise the file @notes.txt`,
    `Round ${round}: first line of the task.\nSecond line: details.\nThird line: done when tests pass.`,
    `Round ${round}: ${longText(2000)}`,
  ];
  return Array.from({ length: ROUNDS }, (_, round) => shapes(round + 1)).flat();
}

interface Outcome {
  intact: number;
  arrivalMs: number[];
}

/** Waits for `text` to reach the mock; the turn when it did, undefined when it did not within the timeout. */
async function arrival(bed: AgentBed, text: string, since: number): Promise<Turn | undefined> {
  try {
    const turns = await bed.mock.waitForTurns('a prompt', (all) => all.slice(since).some((turn) => turn.text === text), ARRIVAL_TIMEOUT_MS);
    return turns.slice(since).find((turn) => turn.text === text);
  } catch {
    return undefined;
  }
}

/** Counts intact prompts (exactly one byte-exact turn) over the whole run, after the last one settled. */
function intactCount(bed: AgentBed, texts: readonly string[]): number {
  const turns = bed.mock.turns();
  return texts.filter((text) => arrivals(turns, text) === 1).length;
}

async function viaDrover(bed: AgentBed, pane: string, texts: readonly string[]): Promise<Outcome> {
  const arrivalMs: number[] = [];
  for (const text of texts) {
    await readyBecomes(bed, pane, ['ready'], 60_000).catch(() => undefined);
    const since = bed.mock.turns().length;
    const started = Date.now();
    const receipt = await paneDeliver(bed.port, pane, text, { cwd: bed.workdir, composerWaitMs: 30_000 });
    const turn = receipt.status === 'submitted' ? await arrival(bed, text, since) : undefined;
    if (turn !== undefined) arrivalMs.push(turn.at - started);
    else log(`  drover: ${receipt.status}: ${receipt.reason}`);
  }
  await delay(2000);
  return { intact: intactCount(bed, texts), arrivalMs };
}

async function naively(bed: AgentBed, pane: string, texts: readonly string[]): Promise<Outcome> {
  const arrivalMs: number[] = [];
  const target = bed.server.pane(pane);
  for (const text of texts) {
    // The harness waits for the agent's turn to end, as a careful orchestrator would; the typing is naive.
    await readyBecomes(bed, pane, ['ready'], 60_000).catch(() => undefined);
    const since = bed.mock.turns().length;
    const started = Date.now();
    try {
      await target.sendText(text);
      await target.sendKeys(['Enter']);
    } catch (error) {
      log(`  naive: tmux refused the text: ${(error as Error).message.split('\n')[0]}`);
      continue;
    }
    const turn = await arrival(bed, text, since);
    if (turn !== undefined) arrivalMs.push(turn.at - started);
  }
  await delay(2000);
  return { intact: intactCount(bed, texts), arrivalMs };
}

async function measure(agent: AgentName, method: (bed: AgentBed, pane: string, texts: readonly string[]) => Promise<Outcome>): Promise<Outcome> {
  const bed = await startAgentBed(agent);
  try {
    return await method(bed, await openAgent(bed), prompts());
  } finally {
    await bed.close();
  }
}

export async function run(args: string[]): Promise<Record<string, number>> {
  const wanted = args.length > 0 ? args : AGENTS;
  const unknown = wanted.filter((name) => !(AGENTS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown agent ${unknown.join(', ')}; choose from ${AGENTS.join(', ')}`);
  const installed = (wanted as AgentName[]).filter((name) => findAgentBinary(PROFILES[name]) !== undefined);
  if (installed.length === 0) throw new Error('no agent is installed; run scripts/install-agents.sh first');
  const count = prompts().length;
  const figures: Record<string, number> = { prompts_per_agent: count };
  for (const agent of installed) {
    log(`${agent}: drover`);
    const drover = await measure(agent, viaDrover);
    log(`${agent}: naive send-keys`);
    const naive = await measure(agent, naively);
    log(
      `${agent}: drover ${drover.intact}/${count} intact (median ${round(median(drover.arrivalMs), 0)} ms, p95 ${round(percentile(drover.arrivalMs, 95), 0)} ms); ` +
        `naive ${naive.intact}/${count} intact (median ${round(median(naive.arrivalMs), 0)} ms)`,
    );
    Object.assign(figures, {
      [`${agent}_drover_intact`]: drover.intact,
      [`${agent}_naive_intact`]: naive.intact,
      [`${agent}_deliver_p50_ms`]: round(median(drover.arrivalMs), 0),
      [`${agent}_deliver_p95_ms`]: round(percentile(drover.arrivalMs, 95), 0),
      [`${agent}_naive_p50_ms`]: round(median(naive.arrivalMs), 0),
    });
  }
  return figures;
}
