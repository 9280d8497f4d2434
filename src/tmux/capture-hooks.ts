import { showHooksArgs, type HookScope } from './commands.js';
import { CaptureHookError } from './errors.js';
import type { OperationOptions } from './deadline.js';
import type { PaneId, SessionId } from './ids.js';
import { failureOf, type Server } from './server.js';
import type { Snapshot } from './snapshot.js';

/** The hook tmux runs after every capture-pane. */
export const CAPTURE_HOOK = 'after-capture-pane';

/** One set entry of the capture hook, and the scope it was found at. */
export interface CaptureHookEntry {
  /** `global`, or the `$session` / `%pane` id whose show-hooks listed it. */
  readonly scope: string;
  readonly command: string;
}

/**
 * The scopes whose hooks a capture of these panes could run: the global one; each pane, where
 * tmux 3.3a's show-hooks lists the hooks of the pane, its window and its session together;
 * and every session a pane's window is linked into, since the capture's target may resolve
 * through any of them. Panes the snapshot does not hold are skipped (the capture itself will
 * fail on them). No I/O.
 */
export function captureHookScopes(snapshot: Snapshot, panes: readonly PaneId[] | 'all'): HookScope[] {
  const records = panes === 'all' ? snapshot.panes.toArray() : panes.flatMap((id) => snapshot.pane(id) ?? []);
  const scopes: HookScope[] = [{ kind: 'global' }];
  const sessions = new Set<SessionId>();
  for (const pane of records) {
    scopes.push({ kind: 'pane', id: pane.paneId as PaneId });
    for (const session of pane.sessions().toArray()) sessions.add(session.sessionId as SessionId);
  }
  for (const id of sessions) scopes.push({ kind: 'session', id });
  return scopes;
}

function scopeLabel(scope: HookScope): string {
  return scope.kind === 'global' ? 'global' : scope.id;
}

const MARKER = 'drover-hook-scope ';

/**
 * The set entries in show-hooks output where each scope's listing follows a marker line.
 * A hook whose array has no entries is listed by its bare name and is not set; a sparse
 * array (`after-capture-pane[3]` alone) is. No I/O.
 */
export function parseCaptureHooks(output: string): CaptureHookEntry[] {
  const entries: CaptureHookEntry[] = [];
  let scope = 'global';
  const entry = new RegExp(`^${CAPTURE_HOOK}\\[\\d+\\] (.*)$`);
  for (const line of output.split('\n')) {
    if (line.startsWith(MARKER)) scope = line.slice(MARKER.length);
    else {
      const match = entry.exec(line);
      if (match) entries.push({ scope, command: match[1]! });
    }
  }
  return entries;
}

/**
 * The capture hook entries a capture of these panes could run, read in one tmux client. The
 * check and the capture are separate commands: a hook set between them is not seen, so a
 * caller that changes hooks must not do so while it captures.
 */
export async function captureHooks(server: Server, panes: readonly PaneId[] | 'all', options: OperationOptions = {}): Promise<CaptureHookEntry[]> {
  const snapshot = await server.snapshot(options);
  const anchor = snapshot.panes.toArray()[0];
  if (anchor === undefined) return [];
  const commands = captureHookScopes(snapshot, panes).flatMap((scope) => [
    ['display-message', '-p', '-t', anchor.paneId, `${MARKER}${scopeLabel(scope)}`],
    showHooksArgs(scope, CAPTURE_HOOK),
  ]);
  const group = await server.runGroup(commands, options);
  if (!group.ok) throw failureOf(group.result);
  return parseCaptureHooks(group.result.lossyText());
}

/** Refuses a screen read while a capture hook is set where the capture would find it. */
export async function requireNoCaptureHook(server: Server, panes: readonly PaneId[] | 'all', options: OperationOptions = {}): Promise<void> {
  const hooks = await captureHooks(server, panes, options);
  if (hooks.length === 0) return;
  const where = [...new Set(hooks.map((hook) => hook.scope))].join(', ');
  throw new CaptureHookError(
    `screens are not read while tmux runs a command after every capture: ${CAPTURE_HOOK} is set (${where}); remove it (tmux set-hook -u ${CAPTURE_HOOK}, with -g or -t as it was set) to read screens again`,
  );
}
