/**
 * The drover mux port: one contract over every terminal multiplexer drover drives.
 *
 * Nouns are space → tab → pane. Each adapter says which of its own levels those are (tmux:
 * session/window/pane; herdr: workspace/tab/pane; zellij: the one session/tab/terminal pane).
 * Ids are opaque above the adapter (identity.ts).
 *
 * The floor (reachable, snapshot, refresh, watch) is what every multiplexer can answer, so it
 * has no refusal shape: snapshot() throws a MuxError when the multiplexer cannot be read. Every
 * other verb is gated by a declared capability and answers a MuxOutcome; an undeclared verb
 * answers `unsupported` without touching the transport (port.ts enforces this for every adapter).
 */
import type { Delivery } from '../process/index.js';
import type { MuxCapability, MuxDeclaration } from './capabilities.js';
import type { MuxKey } from './keys.js';
import type { StyledRow } from './sgr.js';

export const MUX_NAMES = ['tmux', 'herdr', 'zellij'] as const;
export type MuxName = (typeof MUX_NAMES)[number];

export const AGENT_STATUSES = ['idle', 'working', 'blocked', 'done', 'unknown'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export interface MuxSpace {
  readonly spaceId: string;
  /** 1-based position among the spaces; 0 when the multiplexer keeps no order. */
  readonly number: number;
  readonly label: string;
  /** The space the operator's own terminal shows. At most one space is focused. */
  readonly focused: boolean;
  readonly activeTabId: string | null;
  /** Counted from the tabs and panes this same snapshot carries (rules.ts). */
  readonly tabCount: number;
  readonly paneCount: number;
  readonly repoRoot?: string;
  readonly isWorktree?: boolean;
}

export interface MuxTab {
  readonly tabId: string;
  readonly spaceId: string;
  /** 1-based position inside its space. */
  readonly number: number;
  readonly label: string;
  /** The active tab of its space. */
  readonly focused: boolean;
  readonly paneCount: number;
  /** The multiplexer's own number for the tab where it keeps one (tmux's window index, base-index applied). */
  readonly nativeIndex?: number;
  /** The area the tab's panes share, in cells; only when paneGeometry is declared. */
  readonly size?: MuxSize;
}

/** A size in terminal cells. */
export interface MuxSize {
  readonly width: number;
  readonly height: number;
}

/** Where a pane sits in its tab, in cells from the tab's top-left corner. */
export interface MuxRect extends MuxSize {
  readonly x: number;
  readonly y: number;
}

/** A reference to the agent's own session log, when the multiplexer knows it (agentSessionRef). */
export interface MuxAgentSessionRef {
  readonly source: string;
  readonly agent: string;
  readonly kind: 'id' | 'path';
  readonly value: string;
}

export interface MuxPane {
  readonly paneId: string;
  readonly spaceId: string;
  readonly spaceLabel: string;
  readonly spaceNumber: number;
  readonly tabId: string;
  readonly tabLabel?: string;
  /** The pane's working directory; "" when the multiplexer reports none. */
  readonly cwd: string;
  /**
   * The active pane of its tab, with that tab active in its space. Per SPACE: a reader resolves
   * the focused space first (rules.ts focusedPane). False everywhere when no client is attached.
   */
  readonly focused: boolean;
  readonly alive: boolean;
  /** Lower-case agent name, or "shell" when the multiplexer detects none (or cannot detect). */
  readonly agent: string;
  readonly status: AgentStatus;
  /** ONLY a name given through drover (renamePane). Never a title the pane's program wrote. */
  readonly paneLabel?: string;
  /** A title the pane's own program wrote. */
  readonly terminalTitle?: string;
  /** Presentation only: what runs in the foreground; never an agent identity. */
  readonly foregroundCommand?: string;
  /** How many lines a `recent` grid read can reach (screen plus kept scrollback). */
  readonly readableLines?: number;
  /** Only when agentSessionRef is declared. */
  readonly agentSession?: MuxAgentSessionRef;
  /** The pid of the pane's own program (its shell, or a program run as the pane's command); only when paneProcess is declared. */
  readonly pid?: number;
  /**
   * The agent state drover's hooks recorded on the pane, raw (`<state>:<epoch>[:<pid>]`), where
   * the multiplexer stores such per-pane values (tmux pane options); absent when none was recorded.
   */
  readonly hookState?: string;
  /** Where the pane sits in its tab; only when paneGeometry is declared, and absent where the multiplexer did not say. */
  readonly geometry?: MuxRect;
}

export interface MuxSnapshot {
  /**
   * Which run of the multiplexer this snapshot was read from (serverIncarnation()). Pane ids are
   * only meaningful together with it: a new incarnation means every pane of the old one is gone.
   */
  readonly incarnation: string;
  readonly spaces: readonly MuxSpace[];
  readonly tabs: readonly MuxTab[];
  readonly panes: readonly MuxPane[];
}

export const REFUSAL_REASONS = ['unsupported', 'refused', 'gone', 'unreachable'] as const;
/**
 * unsupported: this multiplexer does not offer the verb (not a failure; explain it).
 * refused: understood and declined; a retry will not help.
 * gone: the target no longer exists; re-read the snapshot.
 * unreachable: the transport is down or died mid-call; the only reason worth retrying.
 */
export type MuxRefusalReason = (typeof REFUSAL_REASONS)[number];

export interface MuxRefusal {
  readonly ok: false;
  readonly reason: MuxRefusalReason;
  readonly detail: string;
  /** Set on `unsupported`: the capability that is not declared. */
  readonly capability?: MuxCapability;
  /**
   * Set on `unreachable` when the multiplexer this port was bound to was replaced by another run
   * at the same address: the port's ids name panes that no longer exist, and it never re-binds.
   */
  readonly replaced?: true;
  /**
   * Set when the failure behind the refusal knew what reached the multiplexer (`not_sent`: a
   * tmux server that was not running). Without it, an `unreachable` refusal may have sent.
   */
  readonly delivery?: Delivery;
}

/** What a refusal says reached the multiplexer: its failure's word, else only unreachable may have sent. */
export function refusalDelivery(refusal: MuxRefusal): Delivery {
  return refusal.delivery ?? (refusal.reason === 'unreachable' ? 'possibly_sent' : 'not_sent');
}

export type MuxOutcome<T> = { readonly ok: true; readonly value: T } | MuxRefusal;

export interface MuxGridRequest {
  /** viewport: what is on screen; recent: the screen plus scrollback up to `lines`. */
  readonly scope: 'viewport' | 'recent';
  /** For `recent`: how many lines from the bottom (at least 1). */
  readonly lines?: number;
  /** preserve: SGR colour escapes kept; strip: plain text with no ESC at all. */
  readonly styling: 'preserve' | 'strip';
}

export interface MuxGrid {
  readonly paneId: string;
  readonly text: string;
  readonly truncated: boolean;
  /** Moves when the content moves; compare for equality only. */
  readonly revision: string;
}

/** One pane's visible screen: styled rows, plain lines, size and cursor. */
export interface MuxScreen {
  readonly paneId: string;
  /** The visible rows, top to bottom, with their styling; always `height` rows. */
  readonly rows: readonly StyledRow[];
  /** The same rows as plain text, trailing blanks trimmed. */
  readonly lines: readonly string[];
  /**
   * Per row, whether the terminal wrapped it into the next (it was written up to its last
   * column, spaces included), where the multiplexer keeps the spaces written at a row's end;
   * absent elsewhere, where a row is taken as wrapped when its trimmed text fills the width.
   */
  readonly wrapped?: readonly boolean[];
  readonly width: number;
  readonly height: number;
  /** Where the terminal cursor is (0-based); null where the multiplexer does not report it. */
  readonly cursor: { readonly x: number; readonly y: number; readonly visible: boolean } | null;
}

/** What runs in a pane, as the multiplexer reports it. */
export interface MuxPaneProcess {
  readonly paneId: string;
  /** The pid of the pane's own program; null where the multiplexer does not report it. */
  readonly pid: number | null;
  /** The foreground command's name (who owns the pane's terminal now); "" when unknown. */
  readonly foreground: string;
  /** The program exited and the multiplexer kept the pane. */
  readonly dead: boolean;
  /** The exit status of a dead pane's program, when known. */
  readonly exitStatus: number | null;
}

export interface MuxSplitRequest {
  /** The pane the new one is split off; it appears beside that pane. */
  readonly besidePaneId: string;
  /** right: side by side; below: stacked. */
  readonly direction: 'right' | 'below';
  /** Blank or whitespace means "none asked for" (rules.ts). */
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** The program the pane runs, as argv; absent: the default shell. */
  readonly command?: readonly string[];
  /**
   * Keep the pane on screen after its program exits, so its last lines and status can be read
   * (paneProcess), until releaseKeptPane hands it back to the multiplexer's own rule.
   */
  readonly keepOnExit?: boolean;
}

/** The size a pane is to take, in cells; at least one of the two. */
export interface MuxPaneSize {
  readonly width?: number;
  readonly height?: number;
}

/**
 * A budget for one call. Every verb finishes (or fails) within `timeoutMs`, however many
 * multiplexer commands it needs; an operation made of several calls passes each what is left
 * of its own one deadline.
 */
export interface MuxCallOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface MuxCreatedPane {
  readonly paneId: string;
  readonly spaceId: string;
  readonly spaceLabel: string;
  readonly tabId: string;
  readonly cwd: string;
}

export interface MuxCreateTabRequest {
  readonly spaceId: string;
  readonly label?: string;
  /** Blank or whitespace means "none asked for", exactly like omitting it (rules.ts). */
  readonly cwd?: string;
}

export interface MuxCreateSpaceRequest {
  readonly cwd?: string;
  readonly label?: string;
}

export interface MuxWorktree {
  readonly path: string;
  readonly branch: string | null;
  readonly openSpaceId: string | null;
  readonly linked: boolean;
  readonly prunable: boolean;
}

export interface MuxOpenedWorktree {
  readonly pane: MuxCreatedPane;
  readonly alreadyOpen: boolean;
}

export interface MuxSession {
  readonly name: string;
  /** Where that session's multiplexer lives, in this adapter's words (a socket path for herdr). */
  readonly endpoint: string;
  /** The session this port drives. */
  readonly current: boolean;
}

export type MuxAttention = 'watched' | 'idle';

export interface MuxWatchOptions {
  /** Panes whose content changes should be reported; empty or absent means topology only. */
  readonly panes?: readonly string[];
  /** Whether someone is looking right now; tightens a census, never changes the declaration. */
  readonly attention?: () => MuxAttention;
  /** Aborting closes the watch, like close(). */
  readonly signal?: AbortSignal;
  /** Hints to re-read; they may coalesce but never reorder. */
  readonly onTopologyChange?: () => void;
  readonly onPaneChange?: (paneId: string) => void;
  /** The watch is established (its stream acknowledged or its first census taken). */
  readonly onUp?: () => void;
  /** The watch ended for a reason other than close(); fires at most once, and nothing after it. */
  readonly onDown?: (reason: string) => void;
}

/** Where a pane stands: the space and tab snapshot() lists it under. */
export interface MuxPaneLocation {
  readonly spaceId: string;
  readonly tabId: string;
}

/** One pane looked up: the run that answered, and where the pane stands (undefined when that run lists no such pane). */
export interface MuxPaneLookup {
  readonly incarnation: string;
  readonly location: MuxPaneLocation | undefined;
}

export interface MuxWatch {
  /** Idempotent; no callback fires after it returns. */
  close(): void;
}

/** What `drover mux capabilities` and the CLI publish. */
export interface MuxDescription {
  readonly mux: MuxName;
  readonly declaration: MuxDeclaration;
}

/** The port every caller uses. Built by createMuxPort() around an adapter. */
export interface MuxPort extends MuxDescription {
  reachable(): Promise<boolean>;
  /**
   * Which run of the multiplexer the port is bound to, learnt on first contact and fixed from
   * then on. Throws a MuxError (unreachable, `replaced` when another run answers at the address).
   */
  serverIncarnation(options?: MuxCallOptions): Promise<string>;
  /**
   * Whether two incarnations name the same run of this multiplexer: equality, except where the
   * multiplexer reports its run only approximately (zellij: a creation time to the second, read
   * through a process). This is how a pane key from another process is checked. No I/O.
   */
  sameIncarnation(a: string, b: string): boolean;
  /** Every space, tab and pane; a budget, when given, bounds the whole read. */
  snapshot(options?: MuxCallOptions): Promise<MuxSnapshot>;
  /**
   * Where one pane stands, as snapshot() would list it, reading no other pane where the
   * multiplexer allows (a write's locks need the pane's space, not the whole listing). Throws a
   * MuxError as snapshot() does; a pane that run does not list is a location of undefined.
   */
  locatePane(paneId: string, options?: MuxCallOptions): Promise<MuxPaneLookup>;
  /** "Look now": the next snapshot is current and a census drops to its floor. Writes nothing. */
  refresh(): Promise<void>;
  watch(options: MuxWatchOptions): MuxWatch;

  readGrid(paneId: string, request: MuxGridRequest, options?: MuxCallOptions): Promise<MuxOutcome<MuxGrid>>;
  /** The visible screen with its size and cursor (paneScreen capability). */
  readScreen(paneId: string, options?: MuxCallOptions): Promise<MuxOutcome<MuxScreen>>;
  /** What runs in the pane (paneProcess capability). */
  readProcess(paneId: string, options?: MuxCallOptions): Promise<MuxOutcome<MuxPaneProcess>>;
  /**
   * Literal text, never submitted. Like every write, it first returns a pane that a multiplexer
   * mode (tmux's copy-mode) holds to its live input, since keys sent there would be eaten as
   * mode bindings.
   */
  typeText(paneId: string, text: string, options?: MuxCallOptions): Promise<MuxOutcome<void>>;
  /**
   * Text as one bracketed paste, never submitted: a program that asked for bracketed paste reads
   * its line breaks as line breaks rather than as Enter (pasteText capability).
   */
  pasteText(paneId: string, text: string, options?: MuxCallOptions): Promise<MuxOutcome<void>>;
  /** Neutral key spellings (keys.ts), sent in order; all are checked before any is sent. */
  sendKeys(paneId: string, keys: readonly string[], options?: MuxCallOptions): Promise<MuxOutcome<void>>;
  /** Why sendKeys would refuse this one key (its spelling, the declaration, the translation), or undefined. No I/O. */
  keyProblem(spelling: string): string | undefined;
  /** null clears the label drover gave the pane. */
  renamePane(paneId: string, label: string | null): Promise<MuxOutcome<void>>;
  /** A new pane beside another, running `command` (splitPane capability). */
  splitPane(request: MuxSplitRequest, options?: MuxCallOptions): Promise<MuxOutcome<MuxCreatedPane>>;
  /**
   * A pane split with keepOnExit goes back to the multiplexer's own rule for a pane whose
   * program exits (splitPane capability): once its program has been seen to start, it need not
   * stay behind when it ends. A pane whose program already exited stays; read it, then close it.
   */
  releaseKeptPane(paneId: string, options?: MuxCallOptions): Promise<MuxOutcome<void>>;
  /** A pane already gone answers `gone`. */
  closePane(paneId: string, options?: MuxCallOptions): Promise<MuxOutcome<void>>;
  /**
   * Gives the pane this width and/or height, in cells, its neighbours in the tab giving or taking
   * the difference (resizePane capability). The multiplexer keeps a pane within what its tab
   * can hold, so read the snapshot's geometry for the size it took.
   */
  resizePane(paneId: string, size: MuxPaneSize, options?: MuxCallOptions): Promise<MuxOutcome<void>>;
  setFocus(paneId: string): Promise<MuxOutcome<void>>;
  createTab(request: MuxCreateTabRequest): Promise<MuxOutcome<MuxCreatedPane>>;
  renameTab(tabId: string, label: string): Promise<MuxOutcome<void>>;
  closeTab(tabId: string): Promise<MuxOutcome<void>>;
  createSpace(request: MuxCreateSpaceRequest): Promise<MuxOutcome<MuxCreatedPane>>;
  listWorktrees(request: { readonly repoRoot: string }): Promise<MuxOutcome<readonly MuxWorktree[]>>;
  createWorktree(request: { readonly repoRoot: string; readonly branch: string }): Promise<MuxOutcome<MuxCreatedPane>>;
  openWorktree(request: { readonly repoRoot: string; readonly path: string }): Promise<MuxOutcome<MuxOpenedWorktree>>;
  /** Declared-false answers `unsupported`, which is not an empty list. */
  listSessions(): Promise<MuxOutcome<readonly MuxSession[]>>;
  /** Releases watches and children; the port answers nothing afterwards. */
  close(): Promise<void>;
}

/** One translated key, or why this multiplexer will not be asked for it. */
export type KeyTranslation = { readonly ok: true; readonly key: string } | { readonly ok: false; readonly detail: string };

/**
 * What an adapter implements. It never sees an undeclared verb, an unparsed key or a malformed id:
 * port.ts checks those first. Verbs the declaration omits may be left out.
 */
export interface MuxAdapter extends MuxDescription {
  reachable(): Promise<boolean>;
  /** The run answering now; an adapter that saw another run before throws a MuxError with `replaced`. */
  serverIncarnation(options: MuxCallOptions): Promise<string>;
  /** Absent: incarnations are the same run exactly when they are equal. */
  sameIncarnation?(a: string, b: string): boolean;
  snapshot(options: MuxCallOptions): Promise<MuxSnapshot>;
  /** Absent: the port finds the pane in a snapshot. */
  locatePane?(paneId: string, options: MuxCallOptions): Promise<MuxPaneLookup>;
  refresh(): Promise<void>;
  watch(options: MuxWatchOptions): MuxWatch;
  /** Pure: this multiplexer's spelling of one parsed key, with no I/O. */
  translateKey(key: MuxKey): KeyTranslation;

  readGrid?(paneId: string, request: MuxGridRequest, options: MuxCallOptions): Promise<MuxOutcome<MuxGrid>>;
  readScreen?(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<MuxScreen>>;
  readProcess?(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<MuxPaneProcess>>;
  typeText?(paneId: string, text: string, options: MuxCallOptions): Promise<MuxOutcome<void>>;
  pasteText?(paneId: string, text: string, options: MuxCallOptions): Promise<MuxOutcome<void>>;
  /** `keys` are already translated by translateKey, in order. */
  sendKeys?(paneId: string, keys: readonly string[], options: MuxCallOptions): Promise<MuxOutcome<void>>;
  renamePane?(paneId: string, label: string | null): Promise<MuxOutcome<void>>;
  /** `cwd` already passed through requestedCwd. */
  splitPane?(request: MuxSplitRequest, options: MuxCallOptions): Promise<MuxOutcome<MuxCreatedPane>>;
  releaseKeptPane?(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<void>>;
  closePane?(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<void>>;
  resizePane?(paneId: string, size: MuxPaneSize, options: MuxCallOptions): Promise<MuxOutcome<void>>;
  setFocus?(paneId: string): Promise<MuxOutcome<void>>;
  /** `cwd` already passed through requestedCwd: undefined means none asked for. */
  createTab?(request: { spaceId: string; label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>>;
  renameTab?(tabId: string, label: string): Promise<MuxOutcome<void>>;
  closeTab?(tabId: string): Promise<MuxOutcome<void>>;
  createSpace?(request: { label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>>;
  listWorktrees?(request: { repoRoot: string }): Promise<MuxOutcome<readonly MuxWorktree[]>>;
  createWorktree?(request: { repoRoot: string; branch: string }): Promise<MuxOutcome<MuxCreatedPane>>;
  openWorktree?(request: { repoRoot: string; path: string }): Promise<MuxOutcome<MuxOpenedWorktree>>;
  listSessions?(): Promise<MuxOutcome<readonly MuxSession[]>>;
  close(): Promise<void>;
}

export function ok<T>(value: T): MuxOutcome<T> {
  return { ok: true, value };
}

export function refusal(reason: MuxRefusalReason, detail: string, capability?: MuxCapability): MuxRefusal {
  return capability === undefined ? { ok: false, reason, detail } : { ok: false, reason, detail, capability };
}

/** The refusal of every call on a port whose multiplexer was replaced by another run. */
export function replacedRefusal(detail: string): MuxRefusal {
  return { ok: false, reason: 'unreachable', detail, replaced: true };
}
