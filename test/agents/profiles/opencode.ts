import type { AgentProfile } from './types.js';

/** opencode offline against the model mock. (First draft: see how the agent really gets there.) */
export const opencodeProfile: AgentProfile = {
  name: 'opencode',
  packageName: 'opencode-ai',
  binary: 'opencode',
  api: 'openai-chat',
  prepare() {},
  env: () => ({}),
};
