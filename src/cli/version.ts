import { readFileSync } from 'node:fs';

/** drover's version, from its package.json. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}
