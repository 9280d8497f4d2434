import { MuxError, TmuxAdapter, createMuxPort, toTmuxKey, translateKeys, unwrapOutcome } from '../mux/index.js';
import { tailLines } from '../panes/index.js';
import { CommandError, DroverError, Server, TargetNotFoundError, checkId, incarnationKey, pasteFromBuffer, type Pane, type Snapshot } from '../tmux/index.js';
import {
  PaneSpawnError,
  inputFailure,
  type CaptureRequest,
  type ClosedPane,
  type FleetBackend,
  type PaneCleanup,
  type PaneLocation,
  type SpawnRequest,
  type SpawnedPane,
} from './backend.js';
import type { PaneInputPort } from './dispatch.js';
import { PaneGoneError, errorMessage } from './errors.js';
import { columnHeightPlan, memberColumn, type PaneBox } from './layout.js';

/** A keystroke failed before anything could reach the pane: missing pane, no client, no server. */
function tmuxInputNotSent(error: unknown): boolean {
  return error instanceof TargetNotFoundError || (error instanceof DroverError && error.delivery === 'not_sent');
}

/** tmux answered the split with an error status, so it created no pane. */
function splitRefused(error: unknown): boolean {
  if (error instanceof CommandError) return error.result !== undefined && error.result.exitCode !== 0 && error.result.exitCode !== null;
  return error instanceof DroverError && error.delivery === 'not_sent';
}

function remainingMs(request: SpawnRequest): number {
  return Math.max(1, Math.floor(request.deadline - request.clock.now()));
}

/** The Director's window as boxes; throws TargetNotFoundError when the Director's pane is gone. */
function windowBoxes(snapshot: Snapshot, directorPane: string): { director: PaneBox; panes: PaneBox[] } {
  const record = snapshot.pane(checkId('pane', directorPane));
  if (!record) throw new TargetNotFoundError(directorPane);
  const box = (pane: typeof record): PaneBox => ({
    id: pane.paneId as string,
    x: pane.paneLeft as number,
    y: pane.paneTop as number,
    width: pane.paneWidth as number,
    height: pane.paneHeight as number,
  });
  return { director: box(record), panes: record.window().panes().toArray().map(box) };
}

/**
 * The fleet on tmux: keystrokes with `send-keys`, members split off the Director (first) or
 * the bottom of the member column (later) with their program started by the split itself,
 * the column re-equalized with `resize-pane -y`, closing left to tmux's own reflow.
 */
export class TmuxFleetBackend implements FleetBackend {
  readonly name = 'tmux' as const;
  readonly input: PaneInputPort;

  constructor(readonly server: Server) {
    const screens = createMuxPort(new TmuxAdapter({ server }));
    const keystroke = async <T>(pane: string, send: () => Promise<T>): Promise<T> => {
      try {
        return await send();
      } catch (error) {
        if (error instanceof TargetNotFoundError || (error instanceof MuxError && error.reason === 'gone')) throw new PaneGoneError(pane, { cause: error });
        throw inputFailure(error, tmuxInputNotSent(error));
      }
    };
    this.input = {
      sendEscape: (pane, timeoutMs) => keystroke(pane, () => server.pane(pane).sendKeys(['Escape'], { timeoutMs })).then(() => undefined),
      sendLiteral: (pane, text, timeoutMs) => keystroke(pane, () => server.pane(pane).sendText(text, { timeoutMs })).then(() => undefined),
      sendEnter: (pane, timeoutMs) => keystroke(pane, () => server.pane(pane).sendKeys(['Enter'], { timeoutMs })).then(() => undefined),
      readScreen: (pane, timeoutMs) => keystroke(pane, async () => unwrapOutcome(screens, await screens.readScreen(pane, { timeoutMs }))),
      paste: (pane, text) => keystroke(pane, () => pasteFromBuffer(server.pane(pane), text, { bracketed: true })),
      sendKeys: (pane, keys, timeoutMs) => keystroke(pane, () => server.pane(pane).sendKeys(translateKeys(keys, toTmuxKey), { timeoutMs })).then(() => undefined),
    };
  }

  async locate(pane: string, timeoutMs: number): Promise<PaneLocation> {
    const shown = (await this.server.display('#{session_id} #{window_id} #{pane_id}', { target: this.server.pane(pane), timeoutMs })).toString('latin1').trim();
    const [session, window, id] = shown.split(' ');
    if (!session || !window || id !== pane) throw new TargetNotFoundError(pane);
    return { session, window, pane: id };
  }

  async spawn(request: SpawnRequest): Promise<SpawnedPane> {
    let target: string;
    let direction: 'horizontal' | 'vertical';
    try {
      const { director, panes } = windowBoxes(await this.server.snapshot({ timeoutMs: remainingMs(request) }), request.directorPane);
      const column = memberColumn(director, panes);
      target = column.at(-1)?.id ?? director.id;
      direction = column.length === 0 ? 'horizontal' : 'vertical';
    } catch (error) {
      throw new PaneSpawnError(`cannot read the Director's window (pane ${request.directorPane}): ${errorMessage(error)}`, { kind: 'none' }, { cause: error });
    }
    let created: Pane;
    try {
      created = await this.server.pane(target).split({
        direction,
        cwd: request.cwd,
        env: request.env,
        command: request.command,
        focus: false,
        timeoutMs: remainingMs(request),
      });
    } catch (error) {
      const cleanup: PaneCleanup = splitRefused(error) ? { kind: 'none' } : { kind: 'unknown', detail: errorMessage(error) };
      throw new PaneSpawnError(`tmux could not split pane ${target} for the member: ${errorMessage(error)}`, cleanup, { cause: error });
    }
    const warnings: string[] = [];
    try {
      await this.equalize(request.directorPane, () => remainingMs(request));
    } catch (error) {
      warnings.push(`the member column was not re-equalized: ${errorMessage(error)}`);
    }
    return { pane: created.id, warnings };
  }

  /** Gives every pane of the member column the same height (±1 row). */
  private async equalize(directorPane: string, remaining: () => number): Promise<void> {
    const { director, panes } = windowBoxes(await this.server.snapshot({ timeoutMs: remaining() }), directorPane);
    for (const step of columnHeightPlan(memberColumn(director, panes))) {
      await this.server.pane(step.id).resize({ height: step.height }, { timeoutMs: remaining() });
    }
  }

  async closePane(pane: string, timeoutMs: number): Promise<ClosedPane> {
    try {
      await this.server.pane(pane).kill({ timeoutMs });
    } catch (error) {
      if (!(error instanceof TargetNotFoundError)) throw error;
    }
    return { pane, tab: null };
  }

  async rebalance(): Promise<void> {
    // tmux gives a closed pane's rows to its neighbours itself.
  }

  async capture(pane: string, request: CaptureRequest): Promise<string> {
    const screen = await this.server.pane(pane).capture({ start: -request.lines, escapes: true, timeoutMs: request.timeoutMs });
    return tailLines(screen, request.lines).toString('utf8');
  }

  async neighbours(pane: string, timeoutMs: number): Promise<string[]> {
    const record = (await this.server.snapshot({ timeoutMs })).pane(checkId('pane', pane));
    return record ? record.window().panes().toArray().map((p) => p.paneId as string) : [];
  }

  async livePanes(timeoutMs: number): Promise<Set<string>> {
    return new Set((await this.server.snapshot({ timeoutMs })).panes.toArray().map((pane) => pane.paneId as string));
  }

  /** The binding's server incarnation: every command it sends is guarded to run on that server only. */
  async serverIdentity(timeoutMs: number): Promise<string> {
    return incarnationKey(await this.server.incarnation({ timeoutMs }));
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
