import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ArgumentError, type Server } from '../tmux/index.js';
import { deliverText, pointerPrompt, type DeliveryOptions, type DeliveryResult } from './delivery.js';
import { probeReadiness, type ChoreographyOptions, type ReadinessReport } from './readiness.js';
import { requirePane, tmuxPaneIO } from './tmux-pane.js';

/** `drover pane ready`: classifies the pane; it may type (and clear) the probe. */
export async function paneReady(server: Server, paneId: string, options: ChoreographyOptions = {}): Promise<ReadinessReport> {
  const { pane } = await requirePane(server, paneId);
  return probeReadiness(tmuxPaneIO(pane), options);
}

/** `drover pane deliver`: types `text` with the verified choreography. */
export async function paneDeliver(server: Server, paneId: string, text: string, options: DeliveryOptions = {}): Promise<DeliveryResult> {
  const { pane } = await requirePane(server, paneId);
  return deliverText(tmuxPaneIO(pane), text, options);
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
  if (server) text += `server: ${server}\n`;
  if (report.snippet !== '') text += `--- last 20 lines ---\n${report.snippet}`;
  return text;
}
