import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { importTmuxinator, parseWorkspace, type WorkspaceDocument } from '../../src/workspace/index.js';
import { BASE, HOME, REPO_ROOT, rejection } from './helpers.js';

const SAMPLE = readFileSync(`${REPO_ROOT}test/fixtures/tmuxinator/sample.yml`, 'utf8');

/** The converted workspace as drover reads it. */
function converted(text: string): WorkspaceDocument {
  return parseWorkspace(JSON.stringify(importTmuxinator(text).workspace), { format: 'json', baseDir: BASE, homeDir: HOME });
}

function commandsOf(doc: WorkspaceDocument): string[][][] {
  return doc.windows.map((window) => window.panes.map((pane) => pane.commands.map((command) => command.text)));
}

describe('importTmuxinator', () => {
  it("converts tmuxinator's own sample project into a workspace drover loads", () => {
    const doc = converted(SAMPLE);
    assert.equal(doc.sessionName, 'sample');
    assert.equal(doc.startDirectory, `${HOME}/test`);
    assert.deepEqual(
      doc.windows.map((window) => `${window.name}:${window.panes.length}:${window.layout ?? '-'}`),
      ['editor:4:main-vertical', 'shell:1:-', 'guard:3:tiled', 'database:1:-', 'server:1:-', 'logs:1:-', 'console:1:-', 'capistrano:1:-', 'server:1:-'],
    );
    const rbenv = 'rbenv shell 2.0.0-p247';
    const editorPre = 'echo "I get run in each pane, before each pane command!"';
    const guardPre = ['echo "I get run in each pane."', 'echo "Before each pane command!"'];
    // pre_window first in every pane, then the window's pre, then the pane's own commands.
    assert.deepEqual(commandsOf(doc), [
      [
        [rbenv, editorPre, 'vim'],
        [rbenv, editorPre],
        [rbenv, editorPre, 'top'],
        [rbenv, editorPre, 'ssh server', 'echo "Hello"'],
      ],
      [[rbenv, 'git pull', 'git merge']],
      [
        [rbenv, ...guardPre],
        [rbenv, ...guardPre],
        [rbenv, ...guardPre],
      ],
      [[rbenv, 'bundle exec rails db']],
      [[rbenv, 'bundle exec rails s']],
      [[rbenv, 'tail -f log/development.log']],
      [[rbenv, 'bundle exec rails c']],
      [[rbenv]],
      [[rbenv, 'ssh user@example.com']],
    ]);
    // What has no place in a workspace is named, never silently dropped.
    assert.deepEqual(
      importTmuxinator(SAMPLE).notes.map((note) => note.split(':')[0]),
      ['socket_name', 'pre', 'tmux_options'],
    );
  });

  it('converts named panes, window roots, synchronize and startup_window/startup_pane', () => {
    const doc = converted(
      [
        'name: app',
        'root: /srv/app',
        'pre_window: [nvm use, export A=1]',
        'startup_window: api',
        'startup_pane: 1',
        'windows:',
        '  - web:',
        '      root: web',
        '      synchronize: after',
        '      panes: [{server: npm start}, {tests: [npm test, npm run lint], logs: tail -f log}]',
        '  - api:',
        '      synchronize: true',
        '      panes: [a, b]',
        '  - db:',
        '      synchronize: before',
      ].join('\n'),
    );
    const [web, api, db] = doc.windows;
    assert.equal(web?.startDirectory, '/srv/app/web');
    assert.deepEqual(commandsOf(doc)[0], [
      ['nvm use', 'export A=1', 'npm start'],
      ['nvm use', 'export A=1', 'npm test', 'npm run lint'],
      ['nvm use', 'export A=1', 'tail -f log'],
    ]);
    assert.deepEqual([web?.options, web?.optionsAfter], [{}, { 'synchronize-panes': 'on' }]);
    assert.deepEqual([api?.options, db?.options], [{ 'synchronize-panes': 'on' }, { 'synchronize-panes': 'on' }]);
    assert.deepEqual(doc.windows.map((window) => window.focus), [false, true, false]);
    assert.deepEqual(api?.panes.map((pane) => pane.focus), [false, true]);
    assert.deepEqual(converted('name: n\nstartup_window: 2\nwindows: [{a: x}, {b: y}, {c: z}]\n').windows.map((window) => window.focus), [false, false, true]);
    // tmuxinator's precedence among its older spellings.
    const old = converted('project_name: kept\nname: ignored\nrvm: 2.7\npre_window: ignored\ntabs: [{w: ls}]\nwindows: [{ignored: x}]\n');
    assert.deepEqual([old.sessionName, commandsOf(old)], ['kept', [[['rvm use 2.7', 'ls']]]]);
  });

  it('refuses ERB with a message that says why and where', () => {
    const error = rejection(() => importTmuxinator('name: erb\nroot: <%= ENV["PROJECT"] %>\nwindows:\n  - a: ls\n'));
    assert.equal(error.unsupportedFeature, 'erb');
    assert.equal(error.line, 2);
    assert.match(error.message, /uses ERB \(<% … %>, line 2\), which only tmuxinator can render/);
  });

  it('reports every problem of a project at once, each with its place', () => {
    const error = rejection(() => importTmuxinator('root: 1\nwidows: []\nstartup_window: nowhere\nwindows:\n  - a: {layout: tiled, synchronise: true}\n  - [not, a, window]\n'));
    assert.deepEqual(
      error.problems.map((problem) => `${problem.path} ${problem.code}`),
      ['widows unknown_key', 'name missing', 'windows[0].a.synchronise unknown_key', 'windows[1] type', 'startup_window value'],
    );
  });
});
