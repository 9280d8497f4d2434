import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import { AbortedError, DroverError, TimeoutError } from '../process/index.js';
import {
  CommandError,
  Deadline,
  type Pane,
  type Server,
  type Session,
  type Window,
} from '../tmux/index.js';
import { createDirectories } from './directories.js';
import { deepFreeze } from './document.js';
import { ApplyError } from './errors.js';
import type { ApplyResultJson } from './json-schemas.js';
import { planConflicts, type OptionTable, type PlanConflict, type PlanSnapshot, type PlanStep, type StepEffect, type StepOp, type SymbolicId, type WorkspacePlan } from './plan.js';

export const DEFAULT_APPLY_TIMEOUT_MS = 5000;
export const DEFAULT_CLEANUP_TIMEOUT_MS = 500;

export interface WorkspaceApplyOptions {
  /** One deadline for the whole apply's tmux work; the plan's declared pauses are added to it. Default 5 000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * On failure, remove the session this apply created — only if tmux proves, in one queue
   * turn, that it holds exactly the windows and panes the ledger records. Off by default.
   */
  compensate?: boolean;
  /** Compensation's own budget, separate from the apply deadline. Default 500 ms. */
  cleanupTimeoutMs?: number;
  /** Told of each step just before it runs: progress for a person (the result is the record). */
  onStep?: (step: PlanStep) => void;
}

/** A tmux object this apply positively created: its id came back in a creation reply. */
export interface CreatedRef {
  readonly symbol: SymbolicId;
  readonly kind: 'session' | 'window' | 'pane';
  readonly id: string;
  readonly step: number;
}

/** `observed`: tmux confirmed the change. `dispatch_only`: keys were delivered; nothing is known about what ran. */
export type EffectOutcome = 'observed' | 'dispatch_only';

export interface AppliedEffect {
  readonly step: number;
  readonly op: StepOp;
  readonly effect: StepEffect;
  readonly outcome: EffectOutcome;
}

export type CompensationState = 'not_requested' | 'not_needed' | 'completed' | 'refused' | 'failed';

interface ApplyEvidence {
  sessionName: string;
  completedSteps: number[];
  effects: AppliedEffect[];
  created: CreatedRef[];
  failedStep: number | null;
  failedAction: StepOp | 'precondition' | 'create-directories' | null;
  failedSource: string | null;
  failureClass: string | null;
  uncertain: boolean;
  conflicts: readonly PlanConflict[];
  compensation: CompensationState;
  cleanupErrors: Error[];
}

/**
 * What an apply did, from its own evidence only: steps completed, objects positively
 * created, effects, and on failure which step failed and whether its effect is uncertain.
 * Reading it never queries tmux.
 */
export class ApplyResult {
  readonly sessionName: string;
  readonly completedSteps: readonly number[];
  readonly effects: readonly AppliedEffect[];
  readonly created: readonly CreatedRef[];
  readonly failedStep: number | null;
  readonly failedAction: StepOp | 'precondition' | 'create-directories' | null;
  readonly failedSource: string | null;
  /** The wrapped failure's class name (its message is not kept here: it can hold tmux output). */
  readonly failureClass: string | null;
  /** The failed step may have taken effect (for a creation: an object whose id is unknown). */
  readonly uncertain: boolean;
  readonly conflicts: readonly PlanConflict[];
  readonly compensation: CompensationState;
  readonly cleanupErrors: readonly Error[];

  constructor(evidence: ApplyEvidence) {
    this.sessionName = evidence.sessionName;
    this.completedSteps = deepFreeze([...evidence.completedSteps]);
    this.effects = deepFreeze([...evidence.effects]);
    this.created = deepFreeze([...evidence.created]);
    this.failedStep = evidence.failedStep;
    this.failedAction = evidence.failedAction;
    this.failedSource = evidence.failedSource;
    this.failureClass = evidence.failureClass;
    this.uncertain = evidence.uncertain;
    this.conflicts = evidence.conflicts;
    this.compensation = evidence.compensation;
    this.cleanupErrors = Object.freeze([...evidence.cleanupErrors]);
    Object.freeze(this);
  }

  get success(): boolean {
    return this.failedAction === null;
  }

  /** Something was changed (or may have been) and the apply did not finish. */
  get partial(): boolean {
    return !this.success && (this.completedSteps.length > 0 || this.uncertain);
  }

  /** The id of the session this apply created, if it got that far. */
  get sessionId(): string | null {
    return this.created.find((ref) => ref.kind === 'session')?.id ?? null;
  }

  toJSON(): ApplyResultJson {
    return {
      session_name: this.sessionName,
      session_id: this.sessionId,
      success: this.success,
      partial: this.partial,
      uncertain: this.uncertain,
      completed_steps: [...this.completedSteps],
      created: this.created.map((ref) => ({ symbol: ref.symbol, kind: ref.kind, id: ref.id, step: ref.step })),
      effects: this.effects.map((effect) => ({ step: effect.step, op: effect.op, effect: effect.effect, outcome: effect.outcome })),
      failed_step: this.failedStep,
      failed_action: this.failedAction,
      failed_source: this.failedSource,
      failure_class: this.failureClass,
      conflicts: this.conflicts.map((c) => ({ kind: c.kind, path: c.path, message: c.message })),
      compensation: this.compensation,
      cleanup_errors: this.cleanupErrors.map((error) => error.name),
    };
  }

  toString(): string {
    const outcome = this.success ? 'succeeded' : `failed at ${this.failedAction}${this.uncertain ? ' (uncertain)' : ''}`;
    return `ApplyResult(${outcome}, ${this.completedSteps.length} steps, ${this.created.length} created, compensation ${this.compensation})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * The facts a plan is checked against, read from a live server. Given the plan, also which
 * table each option name it sets belongs to (see planConflicts).
 */
export async function captureWorkspaceSnapshot(server: Server, options: { timeoutMs?: number; signal?: AbortSignal; plan?: WorkspacePlan } = {}): Promise<PlanSnapshot> {
  const deadline = Deadline.start(options);
  const snapshot = await server.snapshot({ timeoutMs: deadline.remaining(), signal: options.signal });
  const baseIndex = await server.options('global-session').getOrUndefined('base-index', { timeoutMs: deadline.remaining(), signal: options.signal });
  return {
    sessionNames: snapshot.sessions.toArray().map((session) => session.sessionName),
    ...(baseIndex === undefined ? {} : { baseIndex: baseIndex.as('integer') as number }),
    ...(options.plan === undefined ? {} : await optionTables(server, options.plan, deadline)),
  };
}

type Bound = Session | Window | Pane;

/**
 * Asks the server which table each option name the plan sets belongs to (the option set
 * varies between tmux versions; a name may be shortened as tmux allows), or null when none has
 * it. Each table is listed whole: asked about one name, tmux answers from that name's own table
 * whatever table was asked. A user option (`@name`) belongs wherever it is put; the session is
 * where one of the session's options or global_options goes.
 */
async function optionTables(server: Server, plan: WorkspacePlan, deadline: Deadline): Promise<Required<Pick<PlanSnapshot, 'optionTables' | 'ambiguousOptions'>>> {
  const names = new Set(plan.steps.flatMap((step) => (step.op === 'set-option' ? [step.args.name] : [])));
  const tables = new Map<string, OptionTable | null>();
  const ambiguous = new Map<string, string[]>();
  const listed: [OptionTable, ReadonlySet<string>][] = [];
  if ([...names].some((name) => !name.startsWith('@'))) {
    for (const [table, scope] of [['server', 'server'], ['session', 'global-session'], ['window', 'global-window']] as const) {
      const lines = await server.options(scope).list({ inherited: false, timeoutMs: deadline.remaining(), signal: deadline.signal });
      // `name value`, an array's entries as `name[0] value`.
      listed.push([table, new Set(lines.map((line) => line.split(' ', 1)[0]!.replace(/\[\d+\]$/, '')))]);
    }
  }
  for (const name of names) {
    if (name.startsWith('@')) {
      tables.set(name, 'session');
      continue;
    }
    const found = optionNamed(name.replace(/\[\d+\]$/, ''), listed);
    tables.set(name, found.length === 1 ? found[0]!.table : null);
    if (found.length > 1) ambiguous.set(name, found.map((option) => option.name));
  }
  return { optionTables: tables, ambiguousOptions: ambiguous };
}

/**
 * The options `name` names as tmux resolves a name: the option of exactly that name, else every
 * option whose name it begins (one: `status-pos` is `status-position`; several: tmux refuses it).
 */
function optionNamed(name: string, listed: readonly [OptionTable, ReadonlySet<string>][]): { table: OptionTable; name: string }[] {
  const exact = listed.find(([, known]) => known.has(name));
  if (exact !== undefined) return [{ table: exact[0], name }];
  return listed.flatMap(([table, known]) => [...known].filter((option) => option.startsWith(name)).map((option) => ({ table, name: option })));
}

/**
 * A declared pause is part of the build: tmuxp sleeps as long as the file says, so a user
 * expects a 40 s `sleep_after` to be waited for, not to fail the load halfway. The deadline is
 * for tmux's own work, and the plan's pauses (each at most an hour) are added to it, so it
 * stays bounded and a stuck tmux still fails within the timeout given.
 */
function declaredPausesMs(plan: WorkspacePlan): number {
  return plan.steps.reduce((total, step) => (step.op === 'sleep' ? total + step.args.ms : total), 0);
}

/**
 * Executes a plan against a tmux server: rechecks that the session name is free, then runs
 * each step in order within one deadline, recording every id tmux returns. Shell commands
 * are dispatched, never awaited. On failure it raises ApplyError with the ledger; with
 * `compensate`, it first removes the session it created if that is provably safe.
 */
export async function applyPlan(plan: WorkspacePlan, server: Server, options: WorkspaceApplyOptions = {}): Promise<ApplyResult> {
  const deadline = Deadline.start({ timeoutMs: (options.timeoutMs ?? DEFAULT_APPLY_TIMEOUT_MS) + declaredPausesMs(plan), signal: options.signal });
  const evidence: ApplyEvidence = {
    sessionName: plan.sessionName,
    completedSteps: [],
    effects: [],
    created: [],
    failedStep: null,
    failedAction: null,
    failedSource: null,
    failureClass: null,
    uncertain: false,
    conflicts: plan.conflicts,
    compensation: options.compensate ? 'not_needed' : 'not_requested',
    cleanupErrors: [],
  };
  if (plan.conflicts.length > 0) throw conflictFailure(evidence);
  let tables: ReadonlyMap<string, OptionTable | null>;
  try {
    const live = await captureWorkspaceSnapshot(server, { timeoutMs: deadline.remaining(), signal: options.signal, plan });
    tables = live.optionTables ?? new Map();
    evidence.conflicts = planConflicts(plan, live);
    if (evidence.conflicts.length > 0) throw conflictFailure(evidence);
  } catch (error) {
    if (error instanceof ApplyError) throw error;
    evidence.failedAction = 'precondition';
    evidence.failureClass = className(error);
    throw new ApplyError(new ApplyResult(evidence), error);
  }

  // Only directories the plan lists (missing when it was made); before any tmux step, so a failure here changed no session.
  try {
    await createDirectories(plan.directoriesToCreate);
  } catch (error) {
    evidence.failedAction = 'create-directories';
    evidence.failureClass = className(error);
    throw new ApplyError(new ApplyResult(evidence), error);
  }
  const runner = new StepRunner(server, deadline, evidence, tables);
  for (const step of plan.steps) {
    options.onStep?.(step);
    try {
      await runner.run(step);
    } catch (error) {
      evidence.failedStep = step.index;
      evidence.failedAction = step.op;
      evidence.failedSource = step.source;
      evidence.failureClass = className(error);
      evidence.uncertain = runner.partialDispatch || mayHaveTakenEffect(step, error);
      if (options.compensate) await compensate(server, evidence, options.cleanupTimeoutMs ?? DEFAULT_CLEANUP_TIMEOUT_MS);
      throw new ApplyError(new ApplyResult(evidence), error);
    }
  }
  return new ApplyResult(evidence);
}

function conflictFailure(evidence: ApplyEvidence): ApplyError {
  evidence.failedAction = 'precondition';
  evidence.failureClass = 'conflict';
  return new ApplyError(new ApplyResult(evidence), undefined);
}

function className(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/**
 * Whether a failed step may still have changed tmux. A tmux error reply or a failure before
 * sending proves nothing happened; a lost reply (timeout, abort) does not, and a creation
 * whose reply could not be read may have made an object nobody knows the id of.
 */
function mayHaveTakenEffect(step: PlanStep, error: unknown): boolean {
  if (!(error instanceof DroverError)) return true;
  if (error.delivery === 'not_sent') return false;
  if (error instanceof CommandError && error.result !== undefined && error.result.exitCode !== 0) return false;
  if (step.effect === 'create') return true;
  return error.delivery === 'possibly_sent';
}

async function compensate(server: Server, evidence: ApplyEvidence, cleanupTimeoutMs: number): Promise<void> {
  const sessionRef = evidence.created.find((ref) => ref.kind === 'session');
  if (sessionRef === undefined) {
    // Nothing known was created; an uncertain creation cannot be identified, so not proven.
    evidence.compensation = evidence.uncertain ? 'refused' : 'not_needed';
    return;
  }
  const windows = evidence.created.filter((ref) => ref.kind === 'window').map((ref) => server.window(ref.id));
  const panes = evidence.created.filter((ref) => ref.kind === 'pane').map((ref) => server.pane(ref.id));
  try {
    await server.session(sessionRef.id).kill({ expectedWindows: windows, expectedPanes: panes, timeoutMs: cleanupTimeoutMs });
    evidence.compensation = 'completed';
  } catch (error) {
    const refused = error instanceof CommandError && error.result !== undefined && error.result.exitCode === 0;
    evidence.compensation = refused ? 'refused' : 'failed';
    if (error instanceof Error) evidence.cleanupErrors.push(error);
  }
}

/** Binds symbolic ids to tmux handles as creation replies arrive, and runs one step at a time. */
class StepRunner {
  private readonly bound = new Map<SymbolicId, Bound>();
  /**
   * Window options named in the session's options or global_options, set on each window this
   * apply creates; a value from the session's options wins over global_options.
   */
  private readonly windowDefaults = new Map<string, { value: string; scope: 'session' | 'global' }>();
  /** The current send-keys step typed its text but did not finish. */
  partialDispatch = false;

  constructor(
    private readonly server: Server,
    private readonly deadline: Deadline,
    private readonly evidence: ApplyEvidence,
    private readonly optionTables: ReadonlyMap<string, OptionTable | null>,
  ) {}

  /** Gives a window this apply created the window options of the session's options and global_options. */
  private async applyWindowDefaults(window: Window): Promise<void> {
    for (const [name, { value }] of this.windowDefaults) await window.options().set(name, value, this.timing);
  }

  async run(step: PlanStep): Promise<void> {
    this.partialDispatch = false;
    const outcome = await this.execute(step);
    this.evidence.completedSteps.push(step.index);
    if (outcome !== null) this.evidence.effects.push({ step: step.index, op: step.op, effect: step.effect, outcome });
  }

  private get timing(): { timeoutMs: number; signal: AbortSignal | undefined } {
    return { timeoutMs: this.deadline.remaining(), signal: this.deadline.signal };
  }

  private bind(step: PlanStep, handles: readonly Bound[]): void {
    step.produces.forEach((symbol, i) => {
      const handle = handles[i];
      if (handle === undefined) return;
      this.bound.set(symbol, handle);
      this.evidence.created.push({ symbol, kind: handle.kind, id: handle.id, step: step.index });
    });
  }

  /** Drops an object this apply created and then closed itself from the ledger. */
  private forget(id: string): void {
    const at = this.evidence.created.findIndex((ref) => ref.id === id);
    if (at !== -1) this.evidence.created.splice(at, 1);
  }

  private handle<K extends Bound['kind']>(symbol: SymbolicId | null, kind: K): Extract<Bound, { kind: K }> {
    const handle = symbol === null ? undefined : this.bound.get(symbol);
    if (handle === undefined || handle.kind !== kind) {
      throw new DroverError(`the plan refers to ${String(symbol)} before creating it`, { phase: 'apply', delivery: 'not_sent' });
    }
    return handle as Extract<Bound, { kind: K }>;
  }

  private async execute(step: PlanStep): Promise<EffectOutcome | null> {
    const spawn = (cwd: string | null, env: Readonly<Record<string, string>>) => ({ ...(cwd === null ? {} : { cwd }), env });
    switch (step.op) {
      case 'new-session': {
        const { name, windowName, cwd, env, width, height } = step.args;
        const receipt = await this.server.newSession({
          name,
          ...(windowName === null ? {} : { windowName }),
          ...(width === null ? {} : { width }),
          ...(height === null ? {} : { height }),
          ...spawn(cwd, env),
          receipt: true,
          ...this.timing,
        });
        this.bind(step, [receipt.session, receipt.window, receipt.pane]);
        return 'observed';
      }
      case 'new-window': {
        const { session, name, index, cwd, env } = step.args;
        const receipt = await this.handle(session, 'session').newWindow({
          ...(name === null ? {} : { name }),
          ...(index === null ? {} : { index }),
          ...spawn(cwd, env),
          receipt: true,
          ...this.timing,
        });
        this.bind(step, [receipt.window, receipt.pane]);
        await this.applyWindowDefaults(receipt.window);
        return 'observed';
      }
      case 'split-window': {
        const { target, cwd, env } = step.args;
        // Not detached: the new pane becomes the window's active one, as in tmuxp.
        const pane = await this.handle(target, 'pane').split({ direction: 'vertical', focus: true, ...spawn(cwd, env), ...this.timing });
        this.bind(step, [pane]);
        return 'observed';
      }
      case 'set-environment': {
        const environment = this.handle(step.args.session, 'session').environment();
        if (step.args.value === null) await environment.remove(step.args.name, this.timing);
        else await environment.set(step.args.name, step.args.value, this.timing);
        return 'observed';
      }
      case 'set-option': {
        const { scope, target, name, value } = step.args;
        if (scope !== 'window' && this.optionTables.get(name) === 'window') {
          // The session's own value is set first (its steps come first) and is kept.
          if (scope === 'global' && this.windowDefaults.get(name)?.scope === 'session') return 'observed';
          this.windowDefaults.set(name, { value, scope });
          for (const bound of this.bound.values()) if (bound.kind === 'window') await bound.options().set(name, value, this.timing);
          return 'observed';
        }
        const options = scope === 'window' ? this.handle(target, 'window').options() : this.handle(scope === 'global' ? 'session' : target, 'session').options();
        await options.set(name, value, this.timing);
        return 'observed';
      }
      case 'move-window': {
        const window = this.handle(step.args.window, 'window');
        const current = Number((await window.display('#{window_index}', this.timing)).toString('latin1').trim());
        if (current === step.args.index) return 'observed';
        await window.move(this.handle('session', 'session'), step.args.index, this.timing);
        return 'observed';
      }
      case 'replace-pane': {
        const { pane, cwd, env } = step.args;
        const replaced = this.handle(pane, 'pane');
        // Not detached: the new pane is the active one, as the pane it replaces was.
        const fresh = await replaced.split({ direction: 'vertical', focus: true, ...spawn(cwd, env), ...this.timing });
        // The new pane holds the symbol from now on; the ledger keeps the old one until it is closed.
        this.bound.set(pane, fresh);
        this.evidence.created.push({ symbol: pane, kind: 'pane', id: fresh.id, step: step.index });
        await replaced.kill(this.timing);
        this.forget(replaced.id);
        return 'observed';
      }
      case 'select-layout':
        await this.handle(step.args.window, 'window').selectLayout(step.args.layout, this.timing);
        return 'observed';
      case 'send-keys': {
        const pane = this.handle(step.args.pane, 'pane');
        if (step.args.text !== '') {
          await pane.sendText(step.args.text, this.timing);
          this.partialDispatch = step.args.enter;
        }
        if (step.args.enter) await pane.sendKeys(['Enter'], this.timing);
        this.partialDispatch = false;
        return 'dispatch_only';
      }
      case 'sleep':
        await this.pause(step.args.ms);
        return null;
      case 'select-pane':
        await this.handle(step.args.pane, 'pane').select(this.timing);
        return 'observed';
      case 'select-window':
        await this.handle(step.args.window, 'window').select(this.timing);
        return 'observed';
    }
  }

  private async pause(ms: number): Promise<void> {
    const left = this.deadline.remaining();
    if (ms > left) {
      throw new TimeoutError(`a ${ms} ms pause does not fit in the ${Math.round(left)} ms left of the apply deadline`, this.deadline.timeoutMs, {
        delivery: 'not_sent',
      });
    }
    try {
      await sleep(ms, undefined, { signal: this.deadline.signal });
    } catch (error) {
      throw new AbortedError('the apply was aborted during a pause', { delivery: 'not_sent', cause: error });
    }
  }
}
