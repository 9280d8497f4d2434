/**
 * A multiplexer in memory for calling the bridge's routes without HTTP or a terminal: one space,
 * one tab, panes whose screen is a line of text, and a record of everything typed into each run.
 * `restart()` replaces the run, as a killed and restarted server does: a port bound to the old run
 * answers every call as replaced, and a port opened afterwards reads the new run, whose pane ids
 * start again at p0 for other panes.
 */
import { createHash } from 'node:crypto';
import {
  createMuxPort,
  declareCapabilities,
  MuxError,
  ok,
  refusal,
  replacedRefusal,
  screenOfRows,
  toTmuxKey,
  withPublishedCounts,
  type MuxAdapter,
  type MuxCapability,
  type MuxPort,
} from '../../src/mux/index.js';
import type { MuxLink } from '../../src/bridge/index.js';

export interface StubPane {
  readonly paneId: string;
  text: string;
  title?: string;
  foreground?: string;
  alive?: boolean;
}

export interface StubRun {
  readonly incarnation: string;
  readonly panes: StubPane[];
  /** What each pane received, in order: `text:…` or `keys:…`. */
  readonly received: Map<string, string[]>;
}

const CAPABILITIES: readonly MuxCapability[] = ['paneGrid', 'paneScreen', 'typeText', 'sendKeys', 'renamePane', 'closePane'];

export class StubMux {
  private runs = 0;
  run: StubRun;

  constructor(private readonly seed: () => StubPane[] = () => [{ paneId: 'p0', text: 'shell$ ' }, { paneId: 'p1', text: 'shell$ ' }]) {
    this.run = this.fresh();
  }

  /** Another run answers now, with panes of the same ids. */
  restart(): StubRun {
    this.run = this.fresh();
    return this.run;
  }

  received(run: StubRun, paneId: string): string[] {
    return run.received.get(paneId) ?? [];
  }

  /** A port bound to whichever run it first reads. */
  openPort(): MuxPort {
    let bound: StubRun | undefined;
    const on = (): StubRun => {
      bound ??= this.run;
      if (bound !== this.run) throw new MuxError('tmux', `the stub server run ${bound.incarnation} was replaced by ${this.run.incarnation}`, { replaced: true });
      return bound;
    };
    const paneOf = (paneId: string): StubPane | undefined => on().panes.find((pane) => pane.paneId === paneId);
    const write = (paneId: string, entry: string) => {
      let run: StubRun;
      try {
        run = on();
      } catch (error) {
        return replacedRefusal((error as Error).message);
      }
      if (paneOf(paneId) === undefined) return refusal('gone', `no pane ${paneId}`);
      run.received.set(paneId, [...(run.received.get(paneId) ?? []), entry]);
      return ok(undefined);
    };
    const adapter: MuxAdapter = {
      mux: 'tmux',
      declaration: declareCapabilities(CAPABILITIES, { topologyLatency: { kind: 'push' }, spaces: 'many' }),
      reachable: async () => true,
      serverIncarnation: async () => on().incarnation,
      snapshot: async () => {
        const run = on();
        return withPublishedCounts(
          run.incarnation,
          [{ spaceId: '$0', number: 1, label: 'work', focused: true, activeTabId: '@0' }],
          [{ tabId: '@0', spaceId: '$0', number: 1, label: 'main', focused: true }],
          run.panes.map((pane) => ({
            paneId: pane.paneId,
            spaceId: '$0',
            spaceLabel: 'work',
            spaceNumber: 1,
            tabId: '@0',
            tabLabel: 'main',
            cwd: '/',
            focused: false,
            alive: pane.alive ?? true,
            agent: 'shell',
            status: 'unknown',
            terminalTitle: pane.title,
            foregroundCommand: pane.foreground ?? 'sh',
          })),
        );
      },
      refresh: async () => undefined,
      watch: (options) => {
        const timer = setImmediate(() => options.onUp?.());
        return { close: () => clearImmediate(timer) };
      },
      translateKey: (key) => toTmuxKey(key),
      readGrid: async (paneId) => {
        const pane = paneOf(paneId);
        if (pane === undefined) return refusal('gone', `no pane ${paneId}`);
        return ok({ paneId, text: pane.text, truncated: false, revision: createHash('sha256').update(pane.text).digest('hex').slice(0, 8) });
      },
      readScreen: async (paneId) => {
        const pane = paneOf(paneId);
        return pane === undefined ? refusal('gone', `no pane ${paneId}`) : ok(screenOfRows(paneId, pane.text));
      },
      typeText: async (paneId, text) => write(paneId, `text:${text}`),
      sendKeys: async (paneId, keys) => write(paneId, `keys:${keys.join(' ')}`),
      renamePane: async (paneId) => write(paneId, 'rename'),
      closePane: async (paneId) => write(paneId, 'close'),
      close: async () => undefined,
    };
    return createMuxPort(adapter);
  }

  /** What drover web's opener gives: a port onto the run answering now. */
  link(): MuxLink {
    const port = this.openPort();
    return { port, close: () => port.close() };
  }

  private fresh(): StubRun {
    this.runs += 1;
    return { incarnation: `${1000 + this.runs}-${1700000000 + this.runs}`, panes: this.seed(), received: new Map() };
  }
}
