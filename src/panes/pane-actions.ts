import { z } from 'zod';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ArgumentError, type Server } from '../tmux/index.js';
import { deliverText, pointerPrompt, type DeliveryOptions, type DeliveryReceipt } from './delivery.js';
import { READINESS_STATES, probeReadiness, type ChoreographyOptions, type ReadinessReport } from './readiness.js';
import { agentNamerFor, requirePane, tmuxPaneIO } from './tmux-pane.js';

/**
 * `drover pane ready`: classifies the pane. Agents drover knows are read off their screen;
 * any other program gets the probe (typed, never submitted, cleared again).
 */
export async function paneReady(server: Server, paneId: string, options: ChoreographyOptions & { cwd?: string } = {}): Promise<ReadinessReport> {
  const { pane } = await requirePane(server, paneId);
  return probeReadiness(tmuxPaneIO(pane, agentNamerFor(options.cwd)), options);
}

/** `drover pane deliver`: delivers `text` and returns what it saw. */
export async function paneDeliver(server: Server, paneId: string, text: string, options: DeliveryOptions & { cwd?: string } = {}): Promise<DeliveryReceipt> {
  const { pane } = await requirePane(server, paneId);
  return deliverText(tmuxPaneIO(pane, agentNamerFor(options.cwd)), text, options);
}

/**
 * The `--json` shape of a delivery receipt (also the MCP deliver tool's result). The type is
 * inferred from the schema and deliveryReceiptJson returns it, so the two cannot differ.
 */
export const deliveryReceiptJsonSchema = z.strictObject({
  pane_id: z.string(),
  status: z.enum(['submitted', 'staged_unconfirmed', 'failed'] as const satisfies readonly DeliveryReceipt['status'][]),
  reason: z.string(),
  evidence: z.enum(['agent_busy', 'agent_asking', 'composer_cleared'] as const satisfies readonly NonNullable<DeliveryReceipt['evidence']>[]).nullable(),
  agent: z.string().nullable(),
  method: z.enum(['paste', 'keys'] as const satisfies readonly DeliveryReceipt['method'][]),
  attempts: z.number().int(),
  chars: z.number().int(),
  draft_cleared: z.string().nullable(),
  typed: z.boolean(),
  snippet: z.string(),
});
export type DeliveryReceiptJson = z.infer<typeof deliveryReceiptJsonSchema>;

export function deliveryReceiptJson(pane: string, receipt: DeliveryReceipt): DeliveryReceiptJson {
  return {
    pane_id: pane,
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

/** The `--json` shape of a readiness report (also the MCP ready tool's result), inferred from its schema. */
export const readinessReportJsonSchema = z.strictObject({
  pane_id: z.string(),
  state: z.enum(READINESS_STATES),
  reason: z.string(),
  agent: z.string().nullable(),
  rule: z.string().nullable(),
  detail: z.string(),
  draft: z.string().nullable(),
  snippet: z.string(),
});
export type ReadinessReportJson = z.infer<typeof readinessReportJsonSchema>;

export function readinessReportJson(pane: string, report: ReadinessReport): ReadinessReportJson {
  return { pane_id: pane, state: report.state, reason: report.reason, agent: report.agent, rule: report.rule, detail: report.detail, draft: report.draft, snippet: report.snippet };
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

/** `drover pane kill`. */
export async function paneKill(server: Server, paneId: string): Promise<void> {
  const { pane } = await requirePane(server, paneId);
  await pane.kill();
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
