import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Fixture files stay in the source tree; compiled tests sit three levels below the repo root. */
const FIXTURES = new URL('../../../test/fixtures/panes/', import.meta.url);

export function fixture(name: string): string {
  return readFileSync(fileURLToPath(new URL(name, FIXTURES)), 'utf8');
}
