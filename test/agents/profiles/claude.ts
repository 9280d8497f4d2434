import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentProfile, PrepareContext } from './types.js';

/** The dummy key the mock accepts; Claude Code only ever sends it to ANTHROPIC_BASE_URL. */
export const CLAUDE_MOCK_API_KEY = 'sk-ant-drover-mock-0123456789abcdefghij';

/**
 * Claude Code offline against the model mock, with its permission checks on:
 * - `~/.claude.json` marks onboarding done (else a theme picker and a connectivity check to
 *   api.anthropic.com come first), the 2.1 auto-mode notice and "make auto mode your
 *   default?" question seen, the key approved (by its last 20 characters; else it asks "Do
 *   you want to use this API key?") and, when trusted, the project's folder trust accepted;
 * - `~/.claude/settings.json` sets the permission mode to `default` (shown as "manual"), as
 *   2.1 defaults to auto mode, where a classifier approves tools instead of the person, and
 *   makes every shell command ask: Claude Code runs read-only commands such as the mock's
 *   `echo` without asking;
 * - the environment points the API at the mock and turns off what would reach the network:
 *   telemetry, error reports, auto-update, and the official plugin marketplace, which it
 *   otherwise clones from GitHub (and probes git@github.com over ssh for) at every start.
 */
export const claudeProfile: AgentProfile = {
  name: 'claude',
  packageName: '@anthropic-ai/claude-code',
  binary: 'claude',
  api: 'anthropic',
  prepare({ home, workdir, trusted }: PrepareContext) {
    // Claude Code keys projects by the real path of the directory it runs in.
    const project = realpathSync(workdir);
    const state = {
      hasCompletedOnboarding: true,
      hasSeenAutoDefaultNotice: true,
      hasSeenAutoDefaultNudge: true,
      theme: 'dark',
      customApiKeyResponses: { approved: [CLAUDE_MOCK_API_KEY.slice(-20)], rejected: [] },
      projects: trusted ? { [project]: { hasTrustDialogAccepted: true } } : {},
    };
    writeFileSync(join(home, '.claude.json'), `${JSON.stringify(state, null, 2)}\n`);
    mkdirSync(join(home, '.claude'), { recursive: true });
    writeFileSync(join(home, '.claude', 'settings.json'), `${JSON.stringify({ permissions: { defaultMode: 'default', ask: ['Bash'] } }, null, 2)}\n`);
  },
  env: ({ mockUrl }: PrepareContext) => ({
    ANTHROPIC_BASE_URL: mockUrl,
    ANTHROPIC_API_KEY: CLAUDE_MOCK_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  }),
};
