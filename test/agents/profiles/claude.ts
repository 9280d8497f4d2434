import type { AgentProfile } from './types.js';

/** claude offline against the model mock. (First draft: see how the agent really gets there.) */
export const claudeProfile: AgentProfile = {
  name: 'claude',
  packageName: '@anthropic-ai/claude-code',
  binary: 'claude',
  api: 'anthropic',
  prepare() {},
  env: () => ({}),
};
