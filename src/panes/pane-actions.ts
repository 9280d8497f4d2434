import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MuxError, unsupportedDetail, type MuxCapability, type MuxPort } from '../mux/index.js';
import { ArgumentError } from '../process/index.js';
import { deliverText, deliveryBudgetMs, pointerPrompt, type DeliveryOptions, type DeliveryReceipt } from './delivery.js';
import { agentNamerFor, onPane, readPaneFacts } from './facts.js';
import { probeReadiness, type ChoreographyOptions, type ReadinessReport } from './readiness.js';
import type { DeliveryReceiptJson, ReadinessReportJson } from './json-schemas.js';
import { paneRefJson, type PaneRef } from './target.js';

/** The longest `pane ready` may take, the probe's waits and reads included. */
export const READY_BUDGET_MS = 15_000;
/** What one pane verb that only reads or closes may take. */
export const PANE_VERB_BUDGET_MS = 10_000;

/**
 * Refuses a verb the multiplexer cannot serve, naming the capability it lacks and why, before
 * the multiplexer is asked anything (so before anything is typed).
 */
export function requireCapabilities(port: MuxPort, what: string, capabilities: readonly MuxCapability[]): void {
  const missing = capabilities.find((capability) => !port.declaration.supports[capability]);
  if (missing === undefined) return;
  throw new MuxError(port.mux, `${what} needs ${missing}, and ${unsupportedDetail(port.mux, missing, port.declaration)}`, { reason: 'unsupported', phase: 'admit', delivery: 'not_sent' });
}

/** What probing a pane needs: its screen, typing and keys, and its recent lines. */
const PROBE_CAPABILITIES: readonly MuxCapability[] = ['paneScreen', 'paneGrid', 'typeText', 'sendKeys'];

export interface PaneVerbOptions {
  /** Where configured providers (agent names) are looked up; default this process's cwd. */
  cwd?: string;
}

/**
 * `drover pane ready`: classifies the pane (a key or an id, see resolvePane). Agents drover
 * knows are read off their screen; any other program gets the probe (typed, never submitted,
 * cleared again).
 */
export async function paneReady(port: MuxPort, pane: string, options: ChoreographyOptions & PaneVerbOptions = {}): Promise<ReadinessReport & PaneRef> {
  requireCapabilities(port, 'reading whether a pane is ready', PROBE_CAPABILITIES);
  return onPane(port, pane, { budgetMs: READY_BUDGET_MS, signal: options.signal }, async (ref, channel) => {
    const facts = await readPaneFacts(channel, agentNamerFor(options.cwd));
    return { ...(await probeReadiness({ channel, facts, pastes: port.declaration.supports.pasteText }, options)), ...ref };
  });
}

/** `drover pane deliver`: delivers `text` and returns what it saw. */
export async function paneDeliver(port: MuxPort, pane: string, text: string, options: DeliveryOptions & PaneVerbOptions = {}): Promise<DeliveryReceipt & PaneRef> {
  requireCapabilities(port, 'delivering text', PROBE_CAPABILITIES);
  if (/\r?\n/.test(text)) requireCapabilities(port, 'delivering text of several lines', ['pasteText']);
  const budgetMs = deliveryBudgetMs(text, options.composerWaitMs ?? 0);
  return onPane(port, pane, { budgetMs, signal: options.signal }, async (ref, channel) => {
    const facts = await readPaneFacts(channel, agentNamerFor(options.cwd));
    return { ...(await deliverText({ channel, facts, pastes: port.declaration.supports.pasteText }, text, options)), ...ref };
  });
}

export function deliveryReceiptJson(receipt: DeliveryReceipt & PaneRef): DeliveryReceiptJson {
  return {
    ...paneRefJson(receipt),
    status: receipt.status,
    reason: receipt.reason,
    evidence: receipt.evidence,
    agent: receipt.agent,
    method: receipt.method,
    attempts: receipt.attempts,
    chars: receipt.chars,
    draft_cleared: receipt.draftCleared,
    typed: receipt.typed,
    snippet: receipt.snippet,
  };
}

export function readinessReportJson(report: ReadinessReport & PaneRef): ReadinessReportJson {
  return { ...paneRefJson(report), state: report.state, reason: report.reason, agent: report.agent, rule: report.rule, detail: report.detail, draft: report.draft, snippet: report.snippet };
}

/** The text report of a delivery: one line with the status and why, then the screen when not submitted. */
export function renderDeliveryReceipt(pane: string, receipt: DeliveryReceipt): string {
  const who = receipt.agent === null ? '' : ` (${receipt.agent})`;
  let text = `${receipt.status} ${pane}${who}: ${receipt.reason}\n`;
  if (receipt.draftCleared !== null) text += `a draft was cleared first: ${JSON.stringify(receipt.draftCleared)}\n`;
  if (receipt.snippet !== '') text += `--- last 20 lines ---\n${receipt.snippet}`;
  return text;
}

/**
 * The line `--prompt-file` delivers, once the file is known to exist (a relative path is
 * checked from `cwd` but typed as given: the agent reads it from its own directory).
 */
export function promptFilePointer(path: string, cwd: string = process.cwd()): string {
  const file = resolve(cwd, path);
  if (!existsSync(file) || !statSync(file).isFile()) throw new ArgumentError(`prompt file ${path} does not exist`);
  return pointerPrompt(path);
}

/** `drover pane kill`: closes the pane; a pane already gone is PaneNotFoundError. */
export async function paneKill(port: MuxPort, pane: string): Promise<PaneRef> {
  requireCapabilities(port, 'closing a pane', ['closePane']);
  return onPane(port, pane, { budgetMs: PANE_VERB_BUDGET_MS }, async (ref, channel) => {
    await channel.close();
    return ref;
  });
}

/** Types `text` literally into the pane, then Enter when asked: dispatch only, nothing is read back. */
export async function paneTypeText(port: MuxPort, pane: string, text: string, options: { enter?: boolean; signal?: AbortSignal } = {}): Promise<PaneRef> {
  requireCapabilities(port, 'typing into a pane', options.enter ? ['typeText', 'sendKeys'] : ['typeText']);
  return onPane(port, pane, { budgetMs: PANE_VERB_BUDGET_MS, signal: options.signal }, async (ref, channel) => {
    await channel.type(text);
    if (options.enter) await channel.keys(['Enter']);
    return ref;
  });
}

/**
 * Sends keys in drover's neutral spelling (`Enter`, `ctrl+c`, `Up`): dispatch only. Every key is
 * checked against what the multiplexer can send first: one it cannot send refuses them all.
 */
export async function paneSendKeys(port: MuxPort, pane: string, keys: readonly string[], options: { signal?: AbortSignal } = {}): Promise<PaneRef & { readonly keys: readonly string[] }> {
  requireCapabilities(port, 'sending keys to a pane', ['sendKeys']);
  if (keys.length === 0) throw new ArgumentError('name at least one key (Escape, ctrl+c, Up, y…)');
  const refused = keys.flatMap((key) => {
    const problem = port.keyProblem(key);
    return problem === undefined ? [] : [`${JSON.stringify(key)} (${problem})`];
  });
  if (refused.length > 0) throw new ArgumentError(`cannot send ${refused.join(', ')}; nothing was sent`);
  return onPane(port, pane, { budgetMs: PANE_VERB_BUDGET_MS, signal: options.signal }, async (ref, channel) => {
    await channel.keys(keys);
    return { ...ref, keys };
  });
}

/** How often a wait without the multiplexer's output events reads the screen again. */
export const SCREEN_POLL_MS = 100;

/**
 * Waits until the pane's visible screen passes `test`, reading it every SCREEN_POLL_MS (for a
 * multiplexer whose port streams no output): true when it did, false when `timeoutMs` passed.
 */
export async function paneWaitForScreen(port: MuxPort, pane: string, test: (text: string) => boolean, options: { timeoutMs: number; signal?: AbortSignal }): Promise<PaneRef & { matched: boolean }> {
  requireCapabilities(port, 'waiting for text in a pane', ['paneScreen']);
  return onPane(port, pane, { budgetMs: options.timeoutMs + PANE_VERB_BUDGET_MS, signal: options.signal }, async (ref, channel) => {
    const until = performance.now() + options.timeoutMs;
    for (;;) {
      if (test((await channel.read()).lines.join('\n'))) return { ...ref, matched: true };
      const left = until - performance.now();
      if (left <= 0) return { ...ref, matched: false };
      await sleep(Math.min(SCREEN_POLL_MS, left), undefined, { signal: options.signal });
    }
  });
}

/**
 * The text report of `drover pane ready`: the state alone when ready; otherwise the pane,
 * the server when one was named, and the last lines of the screen.
 */
export function renderReadiness(report: ReadinessReport, pane: string, server?: string): string {
  if (report.state === 'ready') return 'ready\n';
  let text = `${report.state}\npane: ${pane}\n`;
  if (report.agent !== null) text += `agent: ${report.agent}\n`;
  text += `why: ${report.detail}\n`;
  if (server) text += `server: ${server}\n`;
  if (report.snippet !== '') text += `--- last 20 lines ---\n${report.snippet}`;
  return text;
}
