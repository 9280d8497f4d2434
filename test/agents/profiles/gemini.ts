import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentProfile, PrepareContext } from './types.js';

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Gemini CLI offline against the model mock. With a key in GEMINI_API_KEY and the auth type
 * chosen in settings it starts straight at its composer (no auth dialog); the @google/genai
 * client sends every model call (turns, the model router, next-speaker and loop checks) to
 * GOOGLE_GEMINI_BASE_URL. Usage statistics (Clearcut), telemetry, the update check and the
 * IDE nudge are off, so nothing else goes out. Folder trust stays on: a trusted bed lists the
 * project in trustedFolders.json, an untrusted one gets the trust dialog.
 */
export const geminiProfile: AgentProfile = {
  name: 'gemini',
  packageName: '@google/gemini-cli',
  binary: 'gemini',
  api: 'gemini',
  prepare({ home, workdir, trusted }: PrepareContext) {
    const dir = join(home, '.gemini');
    mkdirSync(dir, { recursive: true });
    writeJson(join(dir, 'settings.json'), {
      security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: true } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      ide: { enabled: false, hasSeenNudge: true },
    });
    if (trusted) writeJson(join(dir, 'trustedFolders.json'), { [workdir]: 'TRUST_FOLDER' });
  },
  env: ({ mockUrl }: PrepareContext) => ({ GEMINI_API_KEY: 'drover-mock-key', GOOGLE_GEMINI_BASE_URL: mockUrl }),
};
