import type { AgentKind } from '../screens/types.js';
import { claudeHookInstaller } from './claude.js';
import { codexHookInstaller } from './codex.js';
import { geminiHookInstaller } from './gemini.js';
import { opencodeHookInstaller } from './opencode.js';
import type { AgentHookInstaller } from './types.js';

export * from './types.js';
export { hookReports } from './reports.js';

/** Each known agent's hook installer. */
const INSTALLERS: Partial<Record<AgentKind, AgentHookInstaller>> = { claude: claudeHookInstaller, codex: codexHookInstaller, gemini: geminiHookInstaller, opencode: opencodeHookInstaller };

export function hookInstallerFor(kind: AgentKind): AgentHookInstaller | undefined {
  return INSTALLERS[kind];
}
