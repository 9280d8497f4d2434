import type { Pacing, PaneIO } from '../../src/panes/index.js';
import { TRUST_DIALOG, renderFrame, type Model } from '../fixtures/fake-agent.js';

export type Behaviour = 'agent' | 'parked' | 'booting' | 'blank' | 'shell';

/**
 * A scripted pane for the choreography tests: it draws what the fake agent draws, reacts to
 * keys like it, and records every call. Knobs simulate the failures delivery must catch.
 */
export class FakePane implements PaneIO {
  readonly calls: string[] = [];
  behaviour: Behaviour = 'agent';
  foreground = 'node';
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

  screen(): string {
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

  async foregroundCommand(): Promise<string> {
    this.calls.push('foreground');
    return this.behaviour === 'shell' ? 'bash' : this.foreground;
  }

  async capture(lines: number): Promise<string> {
    this.calls.push(`capture ${lines}`);
    const failure = this.captureFailure;
    this.captureFailure = undefined;
    if (failure) throw failure;
    // tmux pads the visible screen with blank rows to the pane height.
    return `${this.screen()}\n${'\n'.repeat(10)}`;
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
    return this.calls.filter((call) => call.startsWith('literal ') || call.startsWith('keys ') || call === 'cancel-mode');
  }
}

/** Waits that take no time and are recorded. */
export function recordingPacing(): Partial<Pacing> & { waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}
