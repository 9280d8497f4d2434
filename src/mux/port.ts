/**
 * The one gate every adapter sits behind. It enforces, for all adapters alike:
 * - an undeclared capability answers `unsupported` and the adapter is never called;
 * - malformed ids, labels, paths and requests answer `refused` before any transport is touched;
 * - every key is parsed, checked against unsupportedKeys and translated before the first one is
 *   sent, so one bad key in a batch sends nothing;
 * - a blank cwd reaches the adapter as "none asked for";
 * - a failure that escapes an adapter becomes a refusal (transport death is `unreachable`);
 * - the port is bound to one run of the multiplexer (its incarnation): once any call learns that
 *   another run answers at the same address, every later call answers `unreachable` with
 *   `replaced` and nothing reaches the new run, because the port's ids name the old one's panes;
 * - watch callbacks stop at close() and onDown fires at most once.
 */
import { isAbsolute } from 'node:path';
import { performance } from 'node:perf_hooks';
import { TimeoutError } from '../process/index.js';
import { unsupportedDetail, VERB_CAPABILITY, type GatedVerb, type MuxCapability } from './capabilities.js';
import { MuxError } from './errors.js';
import { isValidMuxId } from './identity.js';
import { formatMuxKey, isDeclaredUnsupported, KeySpellingError, parseMuxKey } from './keys.js';
import { refusalFromError, requestedCwd } from './rules.js';
import type {
  KeyTranslation,
  MuxAdapter,
  MuxCreatedPane,
  MuxCreateSpaceRequest,
  MuxCreateTabRequest,
  MuxGrid,
  MuxGridRequest,
  MuxOpenedWorktree,
  MuxCallOptions,
  MuxOutcome,
  MuxPaneLookup,
  MuxPaneProcess,
  MuxPaneSize,
  MuxPort,
  MuxScreen,
  MuxSession,
  MuxSnapshot,
  MuxSplitRequest,
  MuxWatch,
  MuxWatchOptions,
  MuxWorktree,
} from './types.js';
import { refusal, replacedRefusal } from './types.js';

/** Longest label drover sends; multiplexers render a line, not a paragraph. */
const MAX_LABEL_LENGTH = 256;

function badId(kind: string, id: unknown): string | undefined {
  return isValidMuxId(id) ? undefined : `${kind} id ${JSON.stringify(id)} is not a drover mux id (1–128 of [A-Za-z0-9._~:@$%-])`;
}

function badLabel(what: string, label: unknown, allowEmpty: boolean): string | undefined {
  if (typeof label !== 'string') return `${what} must be a string`;
  if (!allowEmpty && label.trim() === '') return `${what} is empty`;
  if (label.length > MAX_LABEL_LENGTH) return `${what} is ${label.length} characters; at most ${MAX_LABEL_LENGTH}`;
  if (/[\p{Cc}]/u.test(label)) return `${what} contains a control character`;
  return undefined;
}

function badPath(what: string, path: unknown): string | undefined {
  if (typeof path !== 'string' || path === '') return `${what} is missing`;
  if (path.includes('\0')) return `${what} contains NUL`;
  return isAbsolute(path) ? undefined : `${what} ${JSON.stringify(path)} is not an absolute path`;
}

function badCwd(cwd: string | undefined): string | undefined {
  return cwd === undefined ? undefined : badPath('cwd', cwd);
}

/** The most lines one grid read may ask for: more is a mistake, and a read that size is already tens of megabytes. */
export const MAX_GRID_LINES = 1_000_000;

function badGridRequest(request: MuxGridRequest): string | undefined {
  if (request === null || typeof request !== 'object') return 'a grid request is an object';
  if (request.scope !== 'viewport' && request.scope !== 'recent') return `grid scope ${JSON.stringify(request.scope)} is not viewport or recent`;
  if (request.styling !== 'preserve' && request.styling !== 'strip') return `grid styling ${JSON.stringify(request.styling)} is not preserve or strip`;
  if (request.lines !== undefined && !(Number.isInteger(request.lines) && request.lines > 0 && request.lines <= MAX_GRID_LINES)) {
    return `grid lines ${JSON.stringify(request.lines)} is not a whole number from 1 to ${MAX_GRID_LINES}`;
  }
  return undefined;
}

function badText(text: unknown): string | undefined {
  if (typeof text !== 'string') return 'text must be a string';
  if (text === '') return 'text is empty';
  return text.includes('\0') ? 'text contains NUL' : undefined;
}

function badCallOptions(options: MuxCallOptions | undefined): string | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') return 'call options are an object';
  const { timeoutMs } = options;
  return timeoutMs === undefined || (Number.isFinite(timeoutMs) && timeoutMs > 0) ? undefined : `timeoutMs ${JSON.stringify(timeoutMs)} is not a positive number of ms`;
}

/** Larger than any terminal: a size beyond it is a mistake, not a wish. */
const MAX_CELLS = 10_000;

function badSize(size: MuxPaneSize): string | undefined {
  if (size === null || typeof size !== 'object') return 'a pane size is an object';
  if (size.width === undefined && size.height === undefined) return 'a pane size needs a width or a height';
  for (const [axis, cells] of [['width', size.width], ['height', size.height]] as const) {
    if (cells !== undefined && !(Number.isInteger(cells) && cells >= 1 && cells <= MAX_CELLS)) return `${axis} ${JSON.stringify(cells)} is not a whole number of cells from 1 to ${MAX_CELLS}`;
  }
  return undefined;
}

function badSplit(request: MuxSplitRequest): string | undefined {
  if (request === null || typeof request !== 'object') return 'a split request is an object';
  if (request.direction !== 'right' && request.direction !== 'below') return `split direction ${JSON.stringify(request.direction)} is not right or below`;
  if (request.command !== undefined && !(Array.isArray(request.command) && request.command.length > 0 && request.command.every((word) => typeof word === 'string' && !word.includes('\0')))) {
    return 'the command is a non-empty list of strings without NUL';
  }
  for (const [name, value] of Object.entries(request.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `environment name ${JSON.stringify(name)} is not a variable name`;
    if (typeof value !== 'string' || value.includes('\0')) return `environment value of ${name} is not a string without NUL`;
  }
  return undefined;
}

function firstProblem(...problems: (string | undefined)[]): string | undefined {
  return problems.find((problem) => problem !== undefined);
}

/**
 * What is left of one call's budget for its next step (learning the incarnation, then the verb),
 * so that the call as a whole ends within the budget it was given. A call without a budget
 * passes its options on unchanged and the adapter's own default applies.
 */
function remainder(options: MuxCallOptions, startedAt: number): MuxCallOptions {
  if (options.timeoutMs === undefined) return options;
  const left = Math.floor(options.timeoutMs - (performance.now() - startedAt));
  if (left <= 0) throw new TimeoutError(`the call used up its ${options.timeoutMs} ms before reaching the multiplexer`, options.timeoutMs, { phase: 'admit', delivery: 'not_sent' });
  return { ...options, timeoutMs: left };
}

class GatedMuxPort implements MuxPort {
  readonly mux;
  readonly declaration;
  private closed = false;
  private readonly watches = new Set<MuxWatch>();
  /** The run of the multiplexer this port answers for, once known. */
  private incarnation: string | undefined;
  /** Why the port answers nothing any more: its multiplexer was replaced by another run. */
  private replacedBy: string | undefined;

  constructor(private readonly adapter: MuxAdapter) {
    this.mux = adapter.mux;
    this.declaration = adapter.declaration;
    for (const [verb, capability] of Object.entries(VERB_CAPABILITY)) {
      if (this.declaration.supports[capability] && typeof adapter[verb as GatedVerb] !== 'function') {
        throw new TypeError(`the ${adapter.mux} adapter declares ${capability} but does not implement ${verb}`);
      }
    }
  }

  async reachable(): Promise<boolean> {
    if (this.closed || this.replacedBy !== undefined) return false;
    try {
      return await this.adapter.reachable();
    } catch {
      return false;
    }
  }

  /** Remembers a replacement any call reported, so that no later call is answered by the new run. */
  private noteReplaced(error: unknown): void {
    if (error instanceof MuxError && error.replaced && this.replacedBy === undefined) this.replacedBy = error.message;
  }

  private replacedError(): MuxError {
    return new MuxError(this.mux, this.replacedBy!, { replaced: true, delivery: 'not_sent', phase: 'admit' });
  }

  sameIncarnation(a: string, b: string): boolean {
    return this.adapter.sameIncarnation?.(a, b) ?? a === b;
  }

  /** Binds the port to the incarnation first seen; another run later is a replacement. */
  private bind(incarnation: string): string {
    if (this.incarnation === undefined) this.incarnation = incarnation;
    else if (!this.sameIncarnation(incarnation, this.incarnation)) {
      this.replacedBy = `the ${this.mux} server this port was bound to (${this.incarnation}) was replaced by another (${incarnation}); open a new port to reach it`;
      throw this.replacedError();
    }
    return incarnation;
  }

  private async floor<T>(call: () => Promise<T>): Promise<T> {
    if (this.closed) throw new MuxError(this.mux, `the ${this.mux} mux port is closed`, { phase: 'admit' });
    if (this.replacedBy !== undefined) throw this.replacedError();
    try {
      return await call();
    } catch (error) {
      this.noteReplaced(error);
      throw error;
    }
  }

  serverIncarnation(options: MuxCallOptions = {}): Promise<string> {
    const problem = badCallOptions(options);
    if (problem !== undefined) return Promise.reject(new MuxError(this.mux, `serverIncarnation: ${problem}`, { reason: 'refused', phase: 'validate', delivery: 'not_sent' }));
    return this.floor(async () => {
      this.bind(await this.adapter.serverIncarnation(options));
      return this.incarnation!;
    });
  }

  snapshot(options: MuxCallOptions = {}): Promise<MuxSnapshot> {
    const problem = badCallOptions(options);
    if (problem !== undefined) return Promise.reject(new MuxError(this.mux, `snapshot: ${problem}`, { reason: 'refused', phase: 'validate', delivery: 'not_sent' }));
    return this.floor(async () => {
      const snapshot = await this.adapter.snapshot(options);
      this.bind(snapshot.incarnation);
      return snapshot;
    });
  }

  locatePane(paneId: string, options: MuxCallOptions = {}): Promise<MuxPaneLookup> {
    const problem = firstProblem(badId('pane', paneId), badCallOptions(options));
    if (problem !== undefined) return Promise.reject(new MuxError(this.mux, `locatePane: ${problem}`, { reason: 'refused', phase: 'validate', delivery: 'not_sent' }));
    return this.floor(async () => {
      if (this.adapter.locatePane !== undefined) {
        const lookup = await this.adapter.locatePane(paneId, options);
        this.bind(lookup.incarnation);
        return lookup;
      }
      const snapshot = await this.adapter.snapshot(options);
      this.bind(snapshot.incarnation);
      const pane = snapshot.panes.find((candidate) => candidate.paneId === paneId);
      return { incarnation: snapshot.incarnation, location: pane === undefined ? undefined : { spaceId: pane.spaceId, tabId: pane.tabId } };
    });
  }

  async refresh(): Promise<void> {
    if (this.closed) return;
    try {
      await this.adapter.refresh();
    } catch {
      // refresh() is a hint to look now; a multiplexer that is down answers through snapshot().
    }
  }

  watch(options: MuxWatchOptions): MuxWatch {
    let done = this.closed || options.signal?.aborted === true;
    // Only ever called after `inner` below is assigned: from close(), or a microtask after onDown.
    const stop = (): void => {
      options.signal?.removeEventListener('abort', handle.close);
      this.watches.delete(handle);
      inner.close();
    };
    const handle: MuxWatch = {
      close: () => {
        if (done) return;
        done = true;
        stop();
      },
    };
    if (done) return handle;
    const inner = this.adapter.watch({
      panes: options.panes,
      attention: options.attention,
      onTopologyChange: () => {
        if (!done) options.onTopologyChange?.();
      },
      onPaneChange: (paneId) => {
        if (!done) options.onPaneChange?.(paneId);
      },
      onUp: () => {
        if (!done) options.onUp?.();
      },
      onDown: (reason) => {
        if (done) return;
        done = true;
        queueMicrotask(stop);
        options.onDown?.(reason);
      },
    });
    if (done) {
      inner.close();
      return handle;
    }
    this.watches.add(handle);
    options.signal?.addEventListener('abort', handle.close, { once: true });
    return handle;
  }

  /**
   * One gated call: declaration, then the request's problems, then the port's own state, then
   * (on first contact) the incarnation, then the adapter, all within the call's one budget.
   */
  private async gated<T>(
    verb: GatedVerb,
    problem: string | undefined,
    call: (options: MuxCallOptions) => Promise<MuxOutcome<T>> | undefined,
    options: MuxCallOptions = {},
    capability: MuxCapability = VERB_CAPABILITY[verb],
  ): Promise<MuxOutcome<T>> {
    if (!this.declaration.supports[capability]) return refusal('unsupported', unsupportedDetail(this.mux, capability, this.declaration), capability);
    if (problem !== undefined) return refusal('refused', `${verb}: ${problem}`);
    if (this.closed) return refusal('unreachable', `the ${this.mux} mux port is closed`);
    if (this.replacedBy !== undefined) return replacedRefusal(this.replacedBy);
    const startedAt = performance.now();
    try {
      // A port that never read a snapshot still learns its incarnation before its first write.
      if (this.incarnation === undefined) this.bind(await this.adapter.serverIncarnation(remainder(options, startedAt)));
      const outcome = await call(remainder(options, startedAt));
      if (outcome === undefined) throw new TypeError(`the ${this.mux} adapter does not implement ${verb}`);
      if (!outcome.ok && outcome.replaced && this.replacedBy === undefined) this.replacedBy = outcome.detail;
      return outcome;
    } catch (error) {
      this.noteReplaced(error);
      return refusalFromError(error);
    }
  }

  readGrid(paneId: string, request: MuxGridRequest, options: MuxCallOptions = {}): Promise<MuxOutcome<MuxGrid>> {
    const problem = firstProblem(badId('pane', paneId), badGridRequest(request), badCallOptions(options));
    const reachesBack = this.declaration.supports.paneGrid && request?.scope === 'recent';
    return this.gated('readGrid', problem, (rest) => this.adapter.readGrid?.(paneId, request, rest), options, reachesBack ? 'gridScrollback' : 'paneGrid');
  }

  readScreen(paneId: string, options: MuxCallOptions = {}): Promise<MuxOutcome<MuxScreen>> {
    return this.gated('readScreen', firstProblem(badId('pane', paneId), badCallOptions(options)), (rest) => this.adapter.readScreen?.(paneId, rest), options);
  }

  readProcess(paneId: string, options: MuxCallOptions = {}): Promise<MuxOutcome<MuxPaneProcess>> {
    return this.gated('readProcess', firstProblem(badId('pane', paneId), badCallOptions(options)), (rest) => this.adapter.readProcess?.(paneId, rest), options);
  }

  typeText(paneId: string, text: string, options: MuxCallOptions = {}): Promise<MuxOutcome<void>> {
    return this.gated('typeText', firstProblem(badId('pane', paneId), badText(text), badCallOptions(options)), (rest) => this.adapter.typeText?.(paneId, text, rest), options);
  }

  pasteText(paneId: string, text: string, options: MuxCallOptions = {}): Promise<MuxOutcome<void>> {
    return this.gated('pasteText', firstProblem(badId('pane', paneId), badText(text), badCallOptions(options)), (rest) => this.adapter.pasteText?.(paneId, text, rest), options);
  }

  keyProblem(spelling: string): string | undefined {
    const translation = this.translate(spelling);
    return translation.ok ? undefined : translation.detail;
  }

  /** One key in this multiplexer's spelling, or the whole sentence saying why not. */
  private translate(spelling: string): KeyTranslation {
    try {
      const key = parseMuxKey(spelling);
      if (isDeclaredUnsupported(key, this.declaration.unsupportedKeys)) {
        const note = this.declaration.notes.sendKeys;
        return { ok: false, detail: `${this.mux} cannot send ${formatMuxKey(key)}${note === undefined ? '' : `: ${note}`}` };
      }
      const translation = this.adapter.translateKey(key);
      return translation.ok ? translation : { ok: false, detail: `${this.mux} cannot send ${formatMuxKey(key)}: ${translation.detail}` };
    } catch (error) {
      if (!(error instanceof KeySpellingError)) throw error;
      return { ok: false, detail: error.message };
    }
  }

  sendKeys(paneId: string, keys: readonly string[], options: MuxCallOptions = {}): Promise<MuxOutcome<void>> {
    let problem = firstProblem(badId('pane', paneId), Array.isArray(keys) && keys.length > 0 ? undefined : 'at least one key is needed', badCallOptions(options));
    const translated: string[] = [];
    for (const spelling of problem === undefined ? keys : []) {
      const translation = this.translate(spelling);
      if (!translation.ok) {
        problem = translation.detail;
        break;
      }
      translated.push(translation.key);
    }
    return this.gated('sendKeys', problem, (rest) => this.adapter.sendKeys?.(paneId, translated, rest), options);
  }

  renamePane(paneId: string, label: string | null): Promise<MuxOutcome<void>> {
    const problem = firstProblem(badId('pane', paneId), label === null ? undefined : badLabel('the pane label', label, false));
    return this.gated('renamePane', problem, () => this.adapter.renamePane?.(paneId, label));
  }

  splitPane(request: MuxSplitRequest, options: MuxCallOptions = {}): Promise<MuxOutcome<MuxCreatedPane>> {
    const cwd = requestedCwd(request?.cwd);
    const problem = firstProblem(badId('pane', request?.besidePaneId), badSplit(request), badCwd(cwd), badCallOptions(options));
    return this.gated('splitPane', problem, (rest) => this.adapter.splitPane?.({ ...request, cwd }, rest), options);
  }

  releaseKeptPane(paneId: string, options: MuxCallOptions = {}): Promise<MuxOutcome<void>> {
    return this.gated('releaseKeptPane', firstProblem(badId('pane', paneId), badCallOptions(options)), (rest) => this.adapter.releaseKeptPane?.(paneId, rest), options);
  }

  closePane(paneId: string, options: MuxCallOptions = {}): Promise<MuxOutcome<void>> {
    return this.gated('closePane', firstProblem(badId('pane', paneId), badCallOptions(options)), (rest) => this.adapter.closePane?.(paneId, rest), options);
  }

  resizePane(paneId: string, size: MuxPaneSize, options: MuxCallOptions = {}): Promise<MuxOutcome<void>> {
    return this.gated('resizePane', firstProblem(badId('pane', paneId), badSize(size), badCallOptions(options)), (rest) => this.adapter.resizePane?.(paneId, size, rest), options);
  }

  setFocus(paneId: string): Promise<MuxOutcome<void>> {
    return this.gated('setFocus', badId('pane', paneId), () => this.adapter.setFocus?.(paneId));
  }

  createTab(request: MuxCreateTabRequest): Promise<MuxOutcome<MuxCreatedPane>> {
    const cwd = requestedCwd(request?.cwd);
    const problem = firstProblem(
      badId('space', request?.spaceId),
      request?.label === undefined ? undefined : badLabel('the tab label', request.label, false),
      badCwd(cwd),
    );
    return this.gated('createTab', problem, () =>
      this.adapter.createTab?.({ spaceId: request.spaceId, label: request.label, cwd }),
    );
  }

  renameTab(tabId: string, label: string): Promise<MuxOutcome<void>> {
    const problem = firstProblem(badId('tab', tabId), badLabel('the tab label', label, false));
    return this.gated('renameTab', problem, () => this.adapter.renameTab?.(tabId, label));
  }

  closeTab(tabId: string): Promise<MuxOutcome<void>> {
    return this.gated('closeTab', badId('tab', tabId), () => this.adapter.closeTab?.(tabId));
  }

  createSpace(request: MuxCreateSpaceRequest): Promise<MuxOutcome<MuxCreatedPane>> {
    const cwd = requestedCwd(request?.cwd);
    const problem = firstProblem(request?.label === undefined ? undefined : badLabel('the space label', request.label, false), badCwd(cwd));
    return this.gated('createSpace', problem, () => this.adapter.createSpace?.({ label: request?.label, cwd }));
  }

  listWorktrees(request: { readonly repoRoot: string }): Promise<MuxOutcome<readonly MuxWorktree[]>> {
    return this.gated('listWorktrees', badPath('repoRoot', request?.repoRoot), () => this.adapter.listWorktrees?.({ repoRoot: request.repoRoot }));
  }

  createWorktree(request: { readonly repoRoot: string; readonly branch: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    const problem = firstProblem(
      badPath('repoRoot', request?.repoRoot),
      typeof request?.branch === 'string' && /^[^\s\p{Cc}~^:?*[\\]+$/u.test(request.branch) ? undefined : `branch ${JSON.stringify(request?.branch)} is not a branch name`,
    );
    return this.gated('createWorktree', problem, () => this.adapter.createWorktree?.({ repoRoot: request.repoRoot, branch: request.branch }));
  }

  openWorktree(request: { readonly repoRoot: string; readonly path: string }): Promise<MuxOutcome<MuxOpenedWorktree>> {
    const problem = firstProblem(badPath('repoRoot', request?.repoRoot), badPath('path', request?.path));
    return this.gated('openWorktree', problem, () => this.adapter.openWorktree?.({ repoRoot: request.repoRoot, path: request.path }));
  }

  listSessions(): Promise<MuxOutcome<readonly MuxSession[]>> {
    return this.gated('listSessions', undefined, () => this.adapter.listSessions?.());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watch of [...this.watches]) watch.close();
    await this.adapter.close();
  }
}

/** Puts an adapter behind the gate. Throws when the adapter declares a verb it does not implement. */
export function createMuxPort(adapter: MuxAdapter): MuxPort {
  return new GatedMuxPort(adapter);
}
