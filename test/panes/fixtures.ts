import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Fixture files stay in the source tree; compiled tests sit three levels below the repo root. */
const FIXTURES = new URL('../../../test/fixtures/panes/', import.meta.url);

export function fixture(name: string): string {
  return readFileSync(fileURLToPath(new URL(name, FIXTURES)), 'utf8');
}

/**
 * The indicator the question sweep reports for each question the fake agent can ask
 * (`ask:KIND`); its `menu` is drawn like Claude Code's, so an imperative question finds it.
 * `blank` is absent: a cleared screen is a skip (blank_capture), not an indicator.
 */
export const FAKE_AGENT_INDICATORS: Readonly<Record<string, string>> = Object.freeze({
  question_mark: 'question_mark',
  yes_no: 'yes_no',
  action_word: 'action_word',
  imperative_question: 'imperative_question',
  colon_prompt: 'colon_prompt',
  enumerated_options: 'enumerated_options',
  press_key: 'press_key',
  menu: 'imperative_question',
});
