import type { ApiName } from '../mock/types.js';

export type AgentName = 'claude' | 'codex' | 'gemini' | 'opencode';

/** What it takes to run one real agent offline against the model mock. */
export interface AgentProfile {
  readonly name: AgentName;
  /** The npm package that ships it (a key of versions.json). */
  readonly packageName: string;
  /** Its executable in node_modules/.bin. */
  readonly binary: string;
  /** The model API it speaks to the mock. */
  readonly api: ApiName;
  /**
   * Prepares an empty HOME (and the project directory the agent starts in) so the agent
   * starts without a network, onboarding or login: base URL pointed at the mock, a dummy
   * key, onboarding marked done. `trusted: false` leaves the folder-trust dialog in place.
   */
  prepare(context: PrepareContext): void;
  /** Environment variables the agent needs (added to the private tmux server's environment). */
  env(context: PrepareContext): Record<string, string>;
}

export interface PrepareContext {
  home: string;
  /** The project directory the agent runs in (a git repository with a README). */
  workdir: string;
  mockUrl: string;
  trusted: boolean;
}
