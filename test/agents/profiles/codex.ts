import type { AgentProfile } from './types.js';

/** codex offline against the model mock. (First draft: see how the agent really gets there.) */
export const codexProfile: AgentProfile = {
  name: 'codex',
  packageName: '@openai/codex',
  binary: 'codex',
  api: 'openai-responses',
  prepare() {},
  env: () => ({}),
};
