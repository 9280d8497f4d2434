import { createRequire } from 'node:module';
import type { Document } from 'yaml';
import { ArgumentError } from '../process/index.js';

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

/**
 * A configuration file's YAML (drover's own config, a project's drover.yaml): its document, or
 * an ArgumentError that names the file, line and column of the first error on one line, fit
 * for a report of one line per finding. A key given twice is an error, not a silent override.
 */
export function parseYamlFile(path: string, text: string): Document {
  const document = yaml().parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const [error] = document.errors;
  if (error === undefined) return document;
  const at = error.linePos?.[0];
  throw new ArgumentError(`${path}${at ? `:${at.line}:${at.col}` : ''}: not valid YAML: ${error.message.split('\n')[0]}`);
}
