import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentProfile, PrepareContext } from './types.js';

/** The variable the mock provider reads its (dummy) key from: no login screen, no OpenAI auth. */
const KEY_VARIABLE = 'DROVER_MOCK_OPENAI_KEY';

function codexHome(context: PrepareContext): string {
  return join(context.home, '.codex');
}

/**
 * codex offline against the model mock: `$CODEX_HOME/config.toml` names a custom provider
 * at the mock (Responses API, dummy key in an environment variable), so there is no sign-in
 * screen. Approvals stay at Codex's defaults (`on-request`, the workspace-write sandbox for a
 * trusted project).
 */
export const codexProfile: AgentProfile = {
  name: 'codex',
  packageName: '@openai/codex',
  binary: 'codex',
  api: 'openai-responses',
  prepare(context) {
    const home = codexHome(context);
    mkdirSync(home, { recursive: true });
    const lines = [
      // Not a model Codex knows: known ones (gpt-6.x) send their tools as JavaScript "code
      // mode", which the mock does not speak, and gpt-5.5 opens a model-migration dialog.
      // Codex falls back to plain function tools and notes "Model metadata not found" under F2.
      'model = "drover-mock"',
      'model_provider = "mock"',
      'check_for_update_on_startup = false',
      '',
      '[model_providers.mock]',
      'name = "drover mock"',
      `base_url = "${context.mockUrl}/v1"`,
      'wire_api = "responses"',
      `env_key = "${KEY_VARIABLE}"`,
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[feedback]',
      'enabled = false',
      '',
      // Random tips under replies would make screens differ from run to run.
      '[tui]',
      'show_tooltips = false',
      '',
      '[features]',
      // Request bodies stay plain JSON (the mock cannot read zstd).
      'enable_request_compression = false',
      // The shared background app server outlives the pane (and the bed) and runs the turns,
      // hooks included, outside the pane's process tree.
      'daemon_auto_start = false',
      // Plugin sync (github.com, chatgpt.com) and apps (chatgpt.com) would try the network.
      'plugins = false',
      'apps = false',
      '',
    ];
    if (context.trusted) lines.push(`[projects.${JSON.stringify(context.workdir)}]`, 'trust_level = "trusted"', '');
    writeFileSync(join(home, 'config.toml'), lines.join('\n'));
  },
  env: (context) => ({ CODEX_HOME: codexHome(context), [KEY_VARIABLE]: 'drover-mock-key' }),
};
