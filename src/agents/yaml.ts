import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');
let loaded: YamlModule | undefined;

/**
 * The yaml parser, loaded on first use: it costs about 50 ms to load, and most pane commands
 * never meet a project config or a status file.
 */
export function yaml(): YamlModule {
  loaded ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return loaded;
}
