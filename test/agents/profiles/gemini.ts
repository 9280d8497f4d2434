import type { AgentProfile } from './types.js';

/** gemini offline against the model mock. (First draft: see how the agent really gets there.) */
export const geminiProfile: AgentProfile = {
  name: 'gemini',
  packageName: '@google/gemini-cli',
  binary: 'gemini',
  api: 'gemini',
  prepare() {},
  env: () => ({}),
};
