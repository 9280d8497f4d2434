import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentProfile } from './types.js';

/**
 * opencode offline against the model mock. It has no onboarding, login or folder-trust screen
 * (so `trusted` changes nothing): it starts on its home-screen composer with the configured
 * model. The Chat Completions provider it needs, @ai-sdk/openai-compatible, is built into the
 * binary.
 */
export const opencodeProfile: AgentProfile = {
  name: 'opencode',
  packageName: 'opencode-ai',
  binary: 'opencode',
  api: 'openai-chat',
  prepare({ home, mockUrl }) {
    const configDir = join(home, '.config', 'opencode');
    // At start opencode installs @opencode-ai/plugin from npm into each config directory,
    // unless a node_modules is there and the lock file already lists the package.
    mkdirSync(join(configDir, 'node_modules'), { recursive: true });
    writeFileSync(join(configDir, 'package-lock.json'), `${JSON.stringify({ packages: { '': { dependencies: { '@opencode-ai/plugin': '*' } } } }, null, 2)}\n`);
    const config = {
      // opencode writes the schema into a config that lacks it.
      $schema: 'https://opencode.ai/config.json',
      model: 'mock/mock-model',
      // Session titles are asked of the small model: keep them on the mock too.
      small_model: 'mock/mock-model',
      // Without this, opencode's own free provider is listed too.
      enabled_providers: ['mock'],
      autoupdate: false,
      share: 'disabled',
      // opencode allows shell commands by default; the mock's tool call must ask.
      permission: { bash: 'ask' },
      provider: {
        mock: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Mock',
          options: { baseURL: `${mockUrl}/v1`, apiKey: 'drover-mock-key' },
          models: { 'mock-model': { name: 'Mock Model' } },
        },
      },
    };
    writeFileSync(join(configDir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  },
  env: () => ({
    // The models.dev catalogue (its built-in snapshot is used instead), self-update, LSP servers.
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  }),
};
