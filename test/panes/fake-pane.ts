import type { MuxGrid, MuxGridRequest, MuxScreen } from '../../src/mux/index.js';
import { visibleScreen } from '../../src/mux/index.js';
import { NO_AGENT, type ChoreographyChannel, type DrivenPane, type Pacing, type PaneAgent, type PaneFacts } from '../../src/panes/index.js';
import { TRUST_DIALOG, cursorOf, renderFrame, type Model } from '../fixtures/fake-agent.js';

export type Behaviour = 'agent' | 'parked' | 'booting' | 'blank' | 'shell';

/**
 * A scripted pane channel for the choreography tests: it draws what the fake agent draws,
 * reacts to keys (in the port's neutral spelling) like it, and records every call. Knobs
 * simulate the failures delivery must catch. Leaving a multiplexer mode before a write is the
 * adapter's part, tested against real tmux.
 */
export class FakePane implements ChoreographyChannel {
  readonly calls: string[] = [];
  behaviour: Behaviour = 'agent';
  foreground = 'node';
  agent: PaneAgent = NO_AGENT;
  dead = false;
  /** The calls a foreground that reads nothing waits in (a sleep run from a shell); null when it may read. */
  foregroundWaits: readonly string[] | null = null;
  /** Whether the multiplexer takes a bracketed paste. */
  pastes = true;
  columns = 30;
  rows = 40;
  /** Enter does nothing (a TUI that dropped the submit). */
  ignoreEnter = false;
  /** The next N typed texts are lost (keys that never reached the application). */
  loseTyping = 0;
  /** The next grid read throws this. */
  gridFailure: Error | undefined;
  readonly model: Model = { phase: { name: 'composer' }, transcript: [], input: '', style: 'box' };
  private shellLine = '$ ';
  private bootTick = 0;

  text(): string {
    switch (this.behaviour) {
      case 'agent':
        return renderFrame(this.model, this.columns, this.rows).join('\n');
      case 'parked':
        return TRUST_DIALOG.join('\n');
      case 'booting':
        return `Starting… ${(this.bootTick += 1)}`;
      case 'blank':
        return '';
      case 'shell':
        return this.shellLine;
    }
  }

  get facts(): PaneFacts {
    return { foreground: this.behaviour === 'shell' ? 'bash' : this.foreground, dead: this.dead, agent: this.agent, pid: null, foregroundWaits: this.foregroundWaits };
  }

  /** The pane as the probe and delivery take it. */
  driven(): DrivenPane {
    return { channel: this, facts: this.facts, pastes: this.pastes };
  }

  async read(): Promise<MuxScreen> {
    this.calls.push('read');
    const cursor = this.behaviour === 'agent' ? cursorOf(this.model, this.columns, this.rows) : null;
    return { paneId: '%0', ...visibleScreen(this.text(), { width: this.columns, height: this.rows, cursor: cursor === null ? null : { ...cursor, visible: true } }) };
  }

  async paste(text: string): Promise<void> {
    this.calls.push(`paste ${text}`);
    if (this.behaviour === 'agent') this.model.input += text;
  }

  async grid(request: MuxGridRequest): Promise<MuxGrid> {
    this.calls.push(`grid ${request.scope} ${request.lines ?? ''}`.trimEnd());
    const failure = this.gridFailure;
    this.gridFailure = undefined;
    if (failure) throw failure;
    return { paneId: '%0', text: this.text(), truncated: false, revision: '' };
  }

  async type(text: string): Promise<void> {
    this.calls.push(`type ${text}`);
    if (this.loseTyping > 0) {
      this.loseTyping -= 1;
      return;
    }
    if (this.behaviour === 'agent') this.model.input += text;
    if (this.behaviour === 'shell') this.shellLine += text;
  }

  async keys(keys: readonly string[]): Promise<void> {
    this.calls.push(`keys ${keys.join(' ')}`);
    if (this.behaviour !== 'agent') return;
    for (const key of keys) {
      if (key === 'ctrl+u') this.model.input = '';
      if (key === 'Enter' && !this.ignoreEnter && this.model.input !== '') {
        this.model.transcript.push(`> ${this.model.input}`, '● Done.');
        this.model.input = '';
      }
    }
  }

  /** The sends only, in order (what reached the multiplexer as input). */
  sends(): string[] {
    return this.calls.filter((call) => call.startsWith('type ') || call.startsWith('keys ') || call.startsWith('paste '));
  }
}

/** Waits that take no time and are recorded; the clock advances by each wait. */
export function recordingPacing(): Partial<Pacing> & { waits: number[] } {
  const waits: number[] = [];
  let now = 0;
  return {
    waits,
    now: () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  };
}
