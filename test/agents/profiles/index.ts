import { claudeProfile } from './claude.js';
import { codexProfile } from './codex.js';
import { geminiProfile } from './gemini.js';
import { opencodeProfile } from './opencode.js';
import type { AgentName, AgentProfile } from './types.js';

export const PROFILES: Readonly<Record<AgentName, AgentProfile>> = Object.freeze({
  claude: claudeProfile,
  codex: codexProfile,
  gemini: geminiProfile,
  opencode: opencodeProfile,
});
