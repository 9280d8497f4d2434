import type { AgentKind } from '../screens/types.js';
import type { HookState } from './reports.js';

/**
 * How drover learns one agent's state from the agent itself: the agent's own hook, notify
 * or plugin mechanism runs `drover agent hook <active|waiting|idle>` inside its pane.
 */
export interface AgentHookInstaller {
  readonly agent: AgentKind;
  /** Which states the agent's mechanism can report; the screen fills in the rest. */
  readonly reports: readonly HookState[];
  /** The file drover writes or edits, from the environment (HOME and the agent's own config-directory variable). */
  configPath(env: NodeJS.ProcessEnv): string;
  /**
   * Pure: the file's new text, given its current text (undefined when there is no file) and
   * the argv that runs drover (hooks then run `<drover…> agent hook <state>`). Everything
   * else in the file is kept; applying it twice gives the same text; a file drover cannot
   * edit safely is an ArgumentError that names the file and what to fix.
   */
  plan(current: string | undefined, drover: readonly string[], path: string): string;
  /** One line per hook for `drover agent setup --dry-run`: which agent event reports which state. */
  describe(): readonly string[];
}
