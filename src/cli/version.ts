import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * drover's version, from its package.json. The same code runs from tsc's tree
 * (dist/src/cli) and from the bundled bin (dist/cli), so it looks upwards for the manifest.
 */
export function packageVersion(): string {
  return packageManifest().manifest.version;
}

/** The directory of drover's own package (a clone, or where npm installed it): what `npm pack` packs. */
export function packageRoot(): string {
  return fileURLToPath(packageManifest().dir);
}

function packageManifest(): { dir: URL; manifest: { name?: string; version: string } } {
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    const manifest = readManifest(new URL('package.json', dir));
    if (manifest?.name === 'drover') return { dir, manifest };
    if (dir.pathname === '/') throw new Error("drover's package.json was not found above its code");
  }
}

function readManifest(url: URL): { name?: string; version: string } | undefined {
  try {
    return JSON.parse(readFileSync(url, 'utf8')) as { name?: string; version: string };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
