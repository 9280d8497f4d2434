import { agentScreen, type AgentScreen } from '../../src/agents/index.js';
import { NO_AGENT, type Pacing, type PaneAgent, type PaneFacts, type PaneIO } from '../../src/panes/index.js';
import { TRUST_DIALOG, cursorOf, renderFrame, type Model } from '../fixtures/fake-agent.js';

export type Behaviour = 'agent' | 'parked' | 'booting' | 'blank' | 'shell';

/**
 * A scripted pane for the choreography tests: it draws what the fake agent draws, reacts to
 * keys like it, and records every call. Knobs simulate the failures delivery must catch.
 */
export class FakePane implements PaneIO {
  readonly calls: string[] = [];
  behaviour: Behaviour = 'agent';
  foreground = 'node';
  agent: PaneAgent = NO_AGENT;
  dead = false;
  inCopyMode = false;
  columns = 30;
  rows = 40;
  /** Enter does nothing (a TUI that dropped the submit). */
  ignoreEnter = false;
  /** The next N literal sends are lost (keys that never reached the application). */
  loseLiterals = 0;
  /** The next capture throws this. */
  captureFailure: Error | undefined;
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

  async describe(): Promise<PaneFacts> {
    this.calls.push('describe');
    return { foreground: this.behaviour === 'shell' ? 'bash' : this.foreground, dead: this.dead, agent: this.agent };
  }

  async screen(): Promise<AgentScreen> {
    this.calls.push('screen');
    const cursor = this.behaviour === 'agent' ? cursorOf(this.model, this.columns, this.rows) : null;
    return agentScreen(this.text(), { width: this.columns, height: this.rows, cursor: cursor === null ? null : { ...cursor, visible: true } });
  }

  async paste(text: string): Promise<void> {
    this.calls.push(`paste ${text}`);
    if (this.inCopyMode) return;
    if (this.behaviour === 'agent') this.model.input += text;
  }

  async capture(lines: number): Promise<string> {
    this.calls.push(`capture ${lines}`);
    const failure = this.captureFailure;
    this.captureFailure = undefined;
    if (failure) throw failure;
    // tmux pads the visible screen with blank rows to the pane height.
    return `${this.text()}\n${'\n'.repeat(10)}`;
  }

  async sendLiteral(text: string): Promise<void> {
    this.calls.push(`literal ${text}`);
    if (this.inCopyMode) return;
    if (this.loseLiterals > 0) {
      this.loseLiterals -= 1;
      return;
    }
    if (this.behaviour === 'agent') this.model.input += text;
    if (this.behaviour === 'shell') this.shellLine += text;
  }

  async sendKeys(keys: readonly string[]): Promise<void> {
    this.calls.push(`keys ${keys.join(' ')}`);
    if (this.inCopyMode || this.behaviour !== 'agent') return;
    for (const key of keys) {
      if (key === 'C-u') this.model.input = '';
      if (key === 'Enter' && !this.ignoreEnter && this.model.input !== '') {
        this.model.transcript.push(`> ${this.model.input}`, '● Done.');
        this.model.input = '';
      }
    }
  }

  async inMode(): Promise<boolean> {
    this.calls.push('in-mode');
    return this.inCopyMode;
  }

  async cancelMode(): Promise<void> {
    this.calls.push('cancel-mode');
    this.inCopyMode = false;
  }

  /** The sends only, in order (what reached tmux as keystrokes). */
  sends(): string[] {
    return this.calls.filter((call) => call.startsWith('literal ') || call.startsWith('keys ') || call.startsWith('paste ') || call === 'cancel-mode');
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
