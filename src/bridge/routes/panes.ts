/**
 * One pane: its screen, a reply, an answer to its question, keys, and rename, close and focus.
 * A pane is named by its key (or by a bare id, meaning that id on the run served now); a key of
 * an earlier run of the multiplexer is refused before anything is read or sent. Writes go
 * through the pane's queue, so two never interleave their keystrokes.
 */
import { performance } from 'node:perf_hooks';
import { paneChannel } from '../../mux/index.js';
import { sendAnswer, unwrap } from '../agent-input.js';
import { textFingerprint } from '../audit.js';
import { BridgeError } from '../errors.js';
import { remotePaneOf, type HostPanes, type RemotePane } from '../hosts.js';
import type { PaneQueue } from '../pane-queue.js';
import type { GridView, QuestionView } from '../protocol.js';
import { checkReplyText, replyDeadline, replyToPane } from '../reply.js';
import { integerField, json, SEGMENT, stringField, type ApiResponse, type Route, type RouteCall } from '../routing.js';
import type { MuxSupervisor, PaneTarget } from '../supervisor.js';

const MAX_KEYS = 64;
const MAX_GRID_LINES = 10_000;
/** An answer is a key or two, each sent once the screen moved after the one before. */
const ANSWER_BUDGET_MS = 10_000;
/** The lines of a remote pane's screen shown when the page asks for its viewport (a host's capture has no viewport of its own). */
const REMOTE_SCREEN_LINES = 60;

export interface PaneRoutesContext {
  readonly mux: MuxSupervisor;
  readonly queue: PaneQueue;
  /** Other machines' panes; a key naming one is served over its host's link. */
  readonly remote?: HostPanes;
}

function paneRoute(verb: string): RegExp {
  return new RegExp(`^/api/panes/${SEGMENT}/${verb}$`);
}

/** The `lines` query of a grid read: null for the screen, else how many lines of scrollback. */
export function gridLines(text: string | null): number | null {
  if (text === null) return null;
  const lines = Number(text);
  if (!Number.isInteger(lines) || lines < 1 || lines > MAX_GRID_LINES) throw new BridgeError('bad_request', `lines must be a whole number from 1 to ${MAX_GRID_LINES}`);
  return lines;
}

export function paneRoutes({ mux, queue, remote }: PaneRoutesContext): Route[] {
  /**
   * The pane on another host the call names, served by `task` over that host's link; undefined
   * when the call names a pane of this machine. A verb without `task` is refused for remote panes.
   */
  const onRemote = <T>(call: RouteCall, verb: string, task?: (hosts: HostPanes, pane: RemotePane) => Promise<T>): Promise<T> | undefined => {
    const pane = remotePaneOf(call.params[0]!);
    if (pane === undefined) return undefined;
    call.audit.target = pane.paneKey;
    if (remote === undefined) return Promise.reject(new BridgeError('bad_request', `pane key ${pane.paneKey} names a pane on ${pane.host}, and drover web reads no other host (drover host list is empty)`));
    if (task === undefined) return Promise.reject(new BridgeError('unsupported', `drover web offers ${verb} for this machine's panes only; nothing was sent to ${pane.host}`, { details: { host: pane.host } }));
    return task(remote, pane);
  };

  /** Runs `task` on the pane the call names, once it is known to exist on the run served now. */
  const onPane = async <T>(call: RouteCall, task: (pane: PaneTarget) => Promise<T>): Promise<T> => {
    const segment = call.params[0]!;
    call.audit.target = segment;
    // A key of an earlier run is refused here, before the port is asked anything.
    const pane = mux.target(segment);
    return mux.run(async () => {
      await pane.observer.find(pane.paneId);
      return task(pane);
    });
  };

  /** The pane's question now, read afresh, must be the one the answer was meant for. */
  const requireQuestion = async (pane: PaneTarget, questionId: string): Promise<QuestionView> => {
    const current = await pane.observer.currentQuestion(pane.paneId);
    if (current === null || current.id !== questionId) {
      throw new BridgeError(
        'question_changed',
        current === null ? 'the pane no longer asks that question; nothing was sent' : `the pane now asks something else (${current.snippet}); nothing was sent`,
        { details: { current } },
      );
    }
    return current;
  };

  const grid = (call: RouteCall): Promise<ApiResponse> =>
    onRemote(call, 'grid', async (hosts, pane) => {
      const lines = gridLines(call.request.query.get('lines'));
      // A host's capture has no revision: the page reads it again on each of the host's events.
      const text = await hosts.capture(pane, lines ?? REMOTE_SCREEN_LINES);
      const view: GridView = { pane_id: pane.paneId, pane_key: pane.paneKey, text, revision: '', truncated: false, scope: lines === null ? 'viewport' : 'recent', lines };
      return json(view, { 'Cache-Control': 'no-cache' });
    }) ??
    onPane(call, async (pane) => {
      const lines = gridLines(call.request.query.get('lines'));
      const read = unwrap(await pane.port.readGrid(pane.paneId, lines === null ? { scope: 'viewport', styling: 'preserve' } : { scope: 'recent', lines, styling: 'preserve' }));
      pane.observer.markSeen(pane.paneId);
      const etag = `"${read.revision}${lines === null ? '' : `.${lines}`}"`;
      const headers = { ETag: etag, 'Cache-Control': 'no-cache' };
      if (call.request.headers['if-none-match'] === etag) return { kind: 'empty', status: 304, headers };
      const view: GridView = { pane_id: pane.paneId, pane_key: pane.paneKey, text: read.text, revision: read.revision, truncated: read.truncated, scope: lines === null ? 'viewport' : 'recent', lines };
      return json(view, headers);
    });

  const reply = (call: RouteCall): Promise<ApiResponse> =>
    onRemote(call, 'reply', async (hosts, pane) => {
      const body = await call.request.body();
      const text = stringField(body, 'text')!;
      if (text.trim() === '') throw new BridgeError('bad_request', '"text" is empty; nothing was sent');
      const deliveryId = stringField(body, 'delivery_id', { optional: true }) ?? undefined;
      call.audit.detail = { ...textFingerprint(text), host: pane.host, delivery_id: deliveryId ?? null };
      const receipt = await hosts.deliver(pane, text, deliveryId);
      call.audit.detail.receipt = receipt.status ?? null;
      return json(receipt);
    }) ??
    onPane(call, async (pane) => {
      const body = await call.request.body();
      const text = checkReplyText(body.text, pane.port);
      const expected = stringField(body, 'question', { optional: true, nullable: true });
      call.audit.detail = { ...textFingerprint(text), question: expected ?? null };
      const receipt = await queue.run(pane, async () => {
        if (expected !== undefined && expected !== null) await requireQuestion(pane, expected);
        const view = pane.observer.pane(pane.paneId);
        const channel = paneChannel(pane.port, pane.paneId, { deadline: replyDeadline(text) });
        return replyToPane(channel, pane.paneKey, text, { agent: pane.observer.agentOf(view), rules: pane.observer.rulesOf(view) });
      });
      call.audit.detail.receipt = receipt.status;
      void pane.observer.inspect(pane.paneId);
      return json(receipt);
    });

  const answerOf = async (call: RouteCall): Promise<{ questionId: string; option: number }> => {
    const body = await call.request.body();
    const questionId = stringField(body, 'question')!;
    const option = integerField(body, 'option');
    call.audit.detail = { question: questionId, option };
    return { questionId, option };
  };

  const answer = (call: RouteCall): Promise<ApiResponse> =>
    onRemote(call, 'answering a question', async (hosts, pane) => {
      const { questionId, option } = await answerOf(call);
      return json(await hosts.answer(pane, questionId, option));
    }) ??
    onPane(call, async (pane) => {
      const { questionId, option } = await answerOf(call);
      const keys = await queue.run(pane, async () => {
        const question = await requireQuestion(pane, questionId);
        const chosen = question.options[option];
        if (chosen === undefined) throw new BridgeError('bad_request', `the question offers ${question.options.length} answers; there is no answer ${option}`);
        const channel = paneChannel(pane.port, pane.paneId, { deadline: performance.now() + ANSWER_BUDGET_MS });
        return sendAnswer(channel, chosen.keys, { snippet: question.snippet, lineScanned: question.rule === null });
      });
      call.audit.detail.keys = keys;
      void pane.observer.inspect(pane.paneId);
      return json({ answered: questionId, keys });
    });

  const keyNames = async (call: RouteCall): Promise<string[]> => {
    const sent = (await call.request.body()).keys;
    if (!Array.isArray(sent) || sent.length === 0 || sent.length > MAX_KEYS || !sent.every((key) => typeof key === 'string')) {
      throw new BridgeError('bad_request', `"keys" must be a list of 1 to ${MAX_KEYS} key names (Escape, ctrl+c, Up, y…)`);
    }
    call.audit.detail = { keys: sent };
    return sent as string[];
  };

  const keys = (call: RouteCall): Promise<ApiResponse> =>
    onRemote(call, 'keys', async (hosts, pane) => json(await hosts.keys(pane, await keyNames(call)))) ??
    onPane(call, async (pane) => {
      const sent = await keyNames(call);
      const refused = sent.flatMap((key: string) => {
        const problem = pane.port.keyProblem(key);
        return problem === undefined ? [] : [{ key, reason: problem }];
      });
      if (refused.length > 0) {
        throw new BridgeError('key_refused', `refused ${refused.map((entry) => JSON.stringify(entry.key)).join(', ')}; nothing was sent`, { details: { refused } });
      }
      await queue.run(pane, () => paneChannel(pane.port, pane.paneId).keys(sent));
      void pane.observer.inspect(pane.paneId);
      return json({ sent });
    });

  const rename = (call: RouteCall): Promise<ApiResponse> =>
    onRemote(call, 'rename') ??
    onPane(call, async (pane) => {
      const label = stringField(await call.request.body(), 'label', { nullable: true }) as string | null;
      call.audit.detail = { label };
      unwrap(await pane.port.renamePane(pane.paneId, label === null || label.trim() === '' ? null : label));
      return json({ renamed: pane.paneId, pane_key: pane.paneKey, label });
    });

  const close = (call: RouteCall): Promise<ApiResponse> =>
    onRemote(call, 'close') ??
    onPane(call, async (pane) => {
      await call.request.body();
      unwrap(await pane.port.closePane(pane.paneId));
      return json({ closed: pane.paneId, pane_key: pane.paneKey });
    });

  const focus = (call: RouteCall): Promise<ApiResponse> =>
    onRemote(call, 'focus') ??
    onPane(call, async (pane) => {
      await call.request.body();
      unwrap(await pane.port.setFocus(pane.paneId));
      return json({ focused: pane.paneId, pane_key: pane.paneKey });
    });

  return [
    { method: 'GET', pattern: paneRoute('grid'), action: 'grid', handle: grid },
    { method: 'POST', pattern: paneRoute('reply'), action: 'reply', write: true, handle: reply },
    { method: 'POST', pattern: paneRoute('answer'), action: 'answer', write: true, handle: answer },
    { method: 'POST', pattern: paneRoute('keys'), action: 'keys', write: true, handle: keys },
    { method: 'POST', pattern: paneRoute('rename'), action: 'rename', write: true, handle: rename },
    { method: 'POST', pattern: paneRoute('close'), action: 'close', write: true, handle: close },
    { method: 'POST', pattern: paneRoute('focus'), action: 'focus', write: true, handle: focus },
  ];
}
