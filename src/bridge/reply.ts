/**
 * A reply typed from the page. To an agent drover knows it goes through drover's verified
 * delivery (typed only at the composer, a draft cleared first, Enter only once the composer
 * shows the text, `submitted` only on evidence). Anything else gets the text and Enter with no
 * check, and a receipt that says so. Either way every step goes through the pane's channel
 * under the reply's one deadline.
 */
import { systemClock } from '../fleet/index.js';
import { unsupportedDetail, type MuxDescription, type PaneChannel } from '../mux/index.js';
import { SUBMIT_TIMEOUT_MS, submissionBudgetMs, submitToAgent, type AgentScreenRules } from '../agents/index.js';
import { checkDeliverableText } from '../panes/index.js';
import { ArgumentError } from '../process/index.js';
import { agentInput } from './agent-input.js';
import { BridgeError } from './errors.js';
import type { ReplyReceipt } from './protocol.js';

/** The text as it will be sent, or why not, before anything is sent. */
export function checkReplyText(text: unknown, mux: MuxDescription): string {
  if (typeof text !== 'string') throw new BridgeError('bad_request', 'the reply needs "text", a string');
  let checked: string;
  try {
    checked = checkDeliverableText(text);
  } catch (error) {
    if (error instanceof ArgumentError) throw new BridgeError('bad_request', error.message);
    throw error;
  }
  // Without a paste, text goes in as keys, and a line break would submit the first line alone.
  if (checked.includes('\n') && !mux.declaration.supports.pasteText) {
    throw new BridgeError('multiline_unsupported', `a reply is one line here: ${unsupportedDetail(mux.mux, 'pasteText', mux.declaration)}`);
  }
  return checked;
}

/**
 * The monotonic deadline (performance.now() ms) of a reply of this text started now. The
 * delivery bounds everything before Enter by its budget and then watches SUBMIT_TIMEOUT_MS for
 * evidence, so the channel's one deadline covers both.
 */
export function replyDeadline(text: string): number {
  return systemClock.now() + submissionBudgetMs(text, 0) + SUBMIT_TIMEOUT_MS;
}

export async function replyToPane(
  channel: PaneChannel,
  paneKey: string,
  text: string,
  target: { readonly agent: string | null; readonly rules: AgentScreenRules | undefined },
): Promise<ReplyReceipt> {
  const chars = Array.from(text).length;
  const pane = { pane_id: channel.paneId, pane_key: paneKey };
  if (target.rules === undefined) {
    // Only checkReplyText's multi-line text needs the paste; a line stays typed, as a person would.
    await (text.includes('\n') ? channel.paste(text) : channel.type(text));
    await channel.keys(['Enter']);
    return {
      ...pane,
      status: 'not_verifiable',
      // The status already says not_verifiable; the reason says why.
      reason: `drover has no screen rules for ${target.agent ?? 'the program in this pane'}, so the text was typed and Enter pressed without a check`,
      evidence: null,
      agent: target.agent,
      chars,
      typed: true,
      submitted: false,
      draft_cleared: null,
    };
  }
  const outcome = await submitToAgent(agentInput(channel), text, {
    rules: target.rules,
    clock: systemClock,
    deadline: systemClock.now() + submissionBudgetMs(text, 0),
  });
  return {
    ...pane,
    status: outcome.status,
    reason: outcome.reason,
    evidence: outcome.evidence,
    agent: target.agent,
    chars,
    typed: outcome.stage !== 'not_typed' || outcome.draftCleared !== null,
    submitted: outcome.status === 'submitted',
    draft_cleared: outcome.draftCleared,
  };
}
