import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { WorkspaceError, loadWorkspaceFile, planWorkspace, type WorkspaceLoadOptions } from '../../src/workspace/index.js';
import { CORPUS_DIR, HOME, REPO_ROOT } from './helpers.js';

const DOC = `${REPO_ROOT}docs/workspace-corpus.md`;

type Outcome = { panes: readonly number[] } | { feature: string; path: string };

/** The variables three corpus files reference; with expansion enabled for them they load. */
const EXPANSION: WorkspaceLoadOptions = { expandEnv: ['MAIN_PANE_HEIGHT', 'VISUAL_SILENCE'], env: { MAIN_PANE_HEIGHT: '30', VISUAL_SILENCE: 'on' } };

/** Every corpus file: loaded (panes per window) or refused (feature and where). */
const EXPECTED: readonly (readonly [string, Outcome, Outcome?])[] = [
  ['builder/config_script_completes.yaml', { feature: 'before_script', path: 'before_script' }],
  ['builder/config_script_fails.yaml', { feature: 'before_script', path: 'before_script' }],
  ['builder/config_script_not_exists.yaml', { feature: 'before_script', path: 'before_script' }],
  ['builder/env_var_options.yaml', { feature: 'environment_expansion', path: 'global_options.visual-silence' }, { panes: [1] }],
  ['builder/environment_vars.yaml', { panes: [1, 1, 1, 2, 1] }],
  ['builder/first_pane_start_directory.yaml', { panes: [2] }],
  ['builder/focus_and_pane.yaml', { panes: [3, 3, 3] }],
  ['builder/global_options.yaml', { panes: [3] }],
  ['builder/pane_ordering.yaml', { feature: 'template_placeholder', path: 'start_directory' }],
  ['builder/plugin_awf.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_awf_multiple_windows.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_bs.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_bwb.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_missing_fail.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_multiple_plugins.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_owc.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_owc_multiple_windows.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_r.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/plugin_versions_fail.yaml', { feature: 'plugins', path: 'plugins' }],
  ['builder/regression_00132_dots.yaml', { panes: [1] }],
  ['builder/session_options.yaml', { panes: [3] }],
  ['builder/start_directory.yaml', { feature: 'template_placeholder', path: 'windows[2].start_directory' }],
  ['builder/start_directory_relative.yaml', { feature: 'template_placeholder', path: 'windows[2].start_directory' }],
  ['builder/start_directory_session_path.yaml', { panes: [1] }],
  ['builder/suppress_history.yaml', { panes: [1, 1] }],
  ['builder/three_pane.yaml', { panes: [3] }],
  ['builder/three_windows.yaml', { panes: [1, 1, 1] }],
  ['builder/two_pane.yaml', { panes: [2, 1, 1] }],
  ['builder/two_windows.yaml', { panes: [1, 1] }],
  ['builder/window_automatic_rename.yaml', { panes: [3] }],
  ['builder/window_index.yaml', { panes: [1, 1, 1] }],
  ['builder/window_options.yaml', { panes: [3] }],
  ['builder/window_options_after.yaml', { panes: [2] }],
  ['builder/window_shell.yaml', { feature: 'window_shell', path: 'windows[0].window_shell' }],
  ['examples/2-pane-synchronized.json', { panes: [2] }],
  ['examples/2-pane-synchronized.yaml', { panes: [2] }],
  ['examples/2-pane-vertical.json', { panes: [2] }],
  ['examples/2-pane-vertical.yaml', { panes: [2] }],
  ['examples/3-pane.json', { panes: [3] }],
  ['examples/3-pane.yaml', { panes: [3] }],
  ['examples/4-pane.json', { panes: [4] }],
  ['examples/4-pane.yaml', { panes: [4] }],
  ['examples/blank-panes.json', { panes: [3, 3, 3, 2] }],
  ['examples/blank-panes.yaml', { panes: [3, 3, 3, 2] }],
  ['examples/env-variables.json', { feature: 'before_script', path: 'before_script' }],
  ['examples/env-variables.yaml', { feature: 'before_script', path: 'before_script' }],
  ['examples/focus-window-and-panes.json', { panes: [2, 3] }],
  ['examples/focus-window-and-panes.yaml', { panes: [2, 3] }],
  ['examples/main-pane-height-percentage.json', { panes: [3] }],
  ['examples/main-pane-height-percentage.yaml', { panes: [3] }],
  ['examples/main-pane-height.json', { panes: [3] }],
  ['examples/main-pane-height.yaml', { panes: [3] }],
  ['examples/minimal.yaml', { panes: [1] }],
  ['examples/options.json', { feature: 'environment_expansion', path: 'options.main-pane-height' }, { panes: [3] }],
  ['examples/options.yaml', { feature: 'environment_expansion', path: 'options.main-pane-height' }, { panes: [3] }],
  ['examples/pane-shell.json', { feature: 'window_shell', path: 'windows[0].window_shell' }],
  ['examples/pane-shell.yaml', { feature: 'window_shell', path: 'windows[0].window_shell' }],
  ['examples/plugin-system.json', { feature: 'plugins', path: 'plugins' }],
  ['examples/plugin-system.yaml', { feature: 'plugins', path: 'plugins' }],
  ['examples/session-environment.json', { panes: [1, 2] }],
  ['examples/session-environment.yaml', { panes: [1, 2] }],
  ['examples/shorthands.json', { panes: [3] }],
  ['examples/shorthands.yaml', { panes: [3] }],
  ['examples/skip-send-pane-level.json', { panes: [2] }],
  ['examples/skip-send-pane-level.yaml', { panes: [2] }],
  ['examples/skip-send.json', { panes: [1] }],
  ['examples/skip-send.yaml', { panes: [1] }],
  ['examples/sleep-pane-level.json', { panes: [1] }],
  ['examples/sleep-pane-level.yaml', { panes: [1] }],
  ['examples/sleep-virtualenv.yaml', { panes: [1] }],
  ['examples/sleep.json', { panes: [1] }],
  ['examples/sleep.yaml', { panes: [1] }],
  ['examples/start-directory.json', { panes: [2, 2, 2, 2, 2] }],
  ['examples/start-directory.yaml', { panes: [2, 2, 2, 2, 2] }],
  ['examples/suppress-history.json', { panes: [1, 1, 1, 3] }],
  ['examples/suppress-history.yaml', { panes: [1, 1, 1, 3] }],
  ['examples/window-index.json', { panes: [1, 1, 1] }],
  ['examples/window-index.yaml', { panes: [1, 1, 1] }],
];

async function outcomeOf(file: string, options: WorkspaceLoadOptions = {}): Promise<Outcome> {
  try {
    const doc = await loadWorkspaceFile(`${CORPUS_DIR}/${file}`, { homeDir: HOME, ...options });
    const plan = planWorkspace(doc);
    const panes = doc.windows.map((window) => window.panes.length);
    // The plan builds exactly the declared structure: one window per entry, one pane per entry.
    assert.equal(plan.steps.filter((step) => step.op === 'new-window').length, panes.length - 1, file);
    assert.equal(
      plan.steps.filter((step) => step.op === 'split-window').length,
      panes.reduce((sum, count) => sum + count - 1, 0),
      file,
    );
    assert.equal(plan.paneCount, panes.reduce((sum, count) => sum + count, 0), file);
    return { panes };
  } catch (error) {
    assert.ok(error instanceof WorkspaceError, `${file}: ${String(error)}`);
    assert.equal(error.code, 'unsupported', `${file}: ${error.message}`);
    return { feature: error.unsupportedFeature ?? '', path: error.path };
  }
}

function corpusFiles(dir: string): string[] {
  return ['builder', 'examples'].flatMap((sub) => readdirSync(`${dir}/${sub}`).map((name) => `${sub}/${name}`)).sort();
}

/** The Markdown table docs/workspace-corpus.md must contain, generated from EXPECTED. */
function corpusTable(): string {
  const rows = EXPECTED.map(([file, outcome, expanded]) => {
    if ('panes' in outcome) {
      const total = outcome.panes.reduce((sum, count) => sum + count, 0);
      return `| \`${file}\` | loads | ${outcome.panes.length} | ${total} | | |`;
    }
    const result = expanded === undefined ? 'refused' : 'refused; loads with expansion enabled';
    return `| \`${file}\` | ${result} | | | \`${outcome.feature}\` | \`${outcome.path}\` |`;
  });
  return ['| file | result | windows | panes | refused feature | at |', '| --- | --- | --- | --- | --- | --- |', ...rows].join('\n');
}

describe('tmuxp corpus', () => {
  it('lists every corpus file exactly once', () => {
    assert.deepEqual(
      EXPECTED.map(([file]) => file),
      corpusFiles(CORPUS_DIR),
    );
  });

  it('loads each file with its declared structure or refuses it with a named unsupported feature', async () => {
    for (const [file, expected, expanded] of EXPECTED) {
      assert.deepEqual(await outcomeOf(file), expected, file);
      if (expanded !== undefined) assert.deepEqual(await outcomeOf(file, EXPANSION), expanded, `${file} with expansion`);
    }
  });

  it('parses each YAML/JSON example pair that says the same thing to the same document', async () => {
    for (const name of ['2-pane-synchronized', '3-pane', 'blank-panes', 'session-environment', 'shorthands', 'sleep', 'window-index']) {
      const yaml = await loadWorkspaceFile(`${CORPUS_DIR}/examples/${name}.yaml`, { homeDir: HOME });
      const json = await loadWorkspaceFile(`${CORPUS_DIR}/examples/${name}.json`, { homeDir: HOME });
      assert.deepEqual(yaml, json, name);
    }
  });

  it('is documented in docs/workspace-corpus.md', () => {
    const table = corpusTable();
    assert.ok(readFileSync(DOC, 'utf8').includes(table), `docs/workspace-corpus.md should contain:\n${table}`);
  });
});
