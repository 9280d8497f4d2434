import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { WORKSPACE_PROFILE, parseWorkspace, workspaceToJSON } from '../../src/workspace/index.js';
import { BASE, HOME, assertRejected, parseJson, parseYaml, rejection } from './helpers.js';

const SECRET = 'hunter2 private/value';

describe('parseWorkspace: structure', () => {
  it('produces the canonical document for a small file', () => {
    const doc = parseYaml(`session_name: work
windows:
  - window_name: editor
    panes:
      - vim
`);
    assert.deepEqual(doc, {
      profile: WORKSPACE_PROFILE,
      version: 1,
      sessionName: 'work',
      startDirectory: null,
      environment: {},
      options: {},
      globalOptions: {},
      windows: [
        {
          name: 'editor',
          index: null,
          layout: null,
          startDirectory: null,
          environment: {},
          options: {},
          optionsAfter: {},
          focus: false,
          panes: [
            {
              startDirectory: null,
              environment: {},
              focus: false,
              suppressHistory: true,
              commands: [{ text: 'vim', enter: true, sleepBeforeMs: 0, sleepAfterMs: 0 }],
            },
          ],
        },
      ],
    });
  });

  it('requires a mapping with session_name and a non-empty windows list', () => {
    assertRejected(() => parseYaml('- a\n'), { code: 'type', path: '$' });
    assertRejected(() => parseYaml(''), { code: 'type', path: '$' });
    assertRejected(() => parseYaml('windows: [{}]\n'), { code: 'missing', path: 'session_name' });
    assertRejected(() => parseYaml('session_name: s\n'), { code: 'missing', path: 'windows' });
    assertRejected(() => parseYaml('session_name: s\nwindows: []\n'), { code: 'value', path: 'windows' });
    assertRejected(() => parseYaml('session_name: s\nwindows: {}\n'), { code: 'type', path: 'windows' });
  });

  it('names unknown keys with their structural path', () => {
    assertRejected(() => parseYaml('session_name: s\nwindow: []\nwindows: [{}]\n'), { code: 'unknown_key', path: 'window' });
    assertRejected(() => parseJson({ session_name: 's', windows: [{}, { panes: ['a', { shel_command: 'x' }] }] }), {
      code: 'unknown_key',
      path: 'windows[1].panes[1].shel_command',
    });
    assertRejected(() => parseJson({ session_name: 's', windows: [{ panes: [{ shell_command: [{ cmd: 'x', wait: 1 }] }] }] }), {
      code: 'unknown_key',
      path: 'windows[0].panes[0].shell_command[0].wait',
    });
  });

  it('treats keys named like Object members as plain unknown keys', () => {
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assertRejected(() => parseJson(`{"session_name": "s", "windows": [{"${key}": 1}]}`), {
        code: 'unknown_key',
        path: `windows[0].${key}`,
      });
    }
  });

  it('shows keys that do not look like names by position only', () => {
    const error = assertRejected(() => parseJson({ session_name: 's', windows: [{}], [SECRET]: 1 }), {
      code: 'unknown_key',
      path: '<key 3>',
    });
    assert.ok(!error.message.includes('hunter2'));
  });

  it('names wrong types with their path, without the value', () => {
    const error = assertRejected(
      () => parseJson({ session_name: 's', windows: [{}, {}, { panes: [{ shell_command: 42 }] }] }),
      { code: 'type', path: 'windows[2].panes[0].shell_command' },
    );
    assert.match(error.message, /expected a command or a list of commands, found a number/);
    const secret = assertRejected(() => parseJson({ session_name: 's', windows: [{ window_name: [SECRET] }] }), {
      code: 'type',
      path: 'windows[0].window_name',
    });
    assert.ok(!secret.message.includes('hunter2'));
    assertRejected(() => parseJson({ session_name: 's', windows: [{ focus: 'maybe' }] }), { code: 'type', path: 'windows[0].focus' });
    assertRejected(() => parseJson({ session_name: 's', windows: [{ focus: 1 }] }), { code: 'type', path: 'windows[0].focus' });
    assertRejected(() => parseJson({ session_name: 's', windows: [{ panes: [7] }] }), { code: 'type', path: 'windows[0].panes[0]' });
    assertRejected(() => parseJson({ session_name: 's', windows: [{ window_index: 1.5 }] }), {
      code: 'type',
      path: 'windows[0].window_index',
    });
    assertRejected(() => parseJson({ session_name: 's', windows: [{ window_index: -1 }] }), {
      code: 'value',
      path: 'windows[0].window_index',
    });
  });

  it('rejects an empty session name and names with control characters', () => {
    assertRejected(() => parseJson({ session_name: '', windows: [{}] }), { code: 'value', path: 'session_name' });
    assertRejected(() => parseJson({ session_name: 's', windows: [{ window_name: 'a\nb' }] }), {
      code: 'value',
      path: 'windows[0].window_name',
    });
  });

  it('accepts an empty window_name as tmuxp does (a window named ""), and a null one as no name', () => {
    const doc = parseYaml("session_name: s\nwindows:\n  - window_name: ''\n  - window_name:\n  - {}\n");
    assert.deepEqual(
      doc.windows.map((window) => window.name),
      ['', null, null],
    );
    assert.equal(parseJson(workspaceToJSON(doc)).windows[0]?.name, '');
  });

  it('reads boolean keys as tmuxp does: YAML 1.1 words and the quoted "true" tmuxp freeze writes', () => {
    const yaml = [
      'session_name: s',
      'suppress_history: NO',
      'windows:',
      "  - focus: 'true'",
      '    panes:',
      '      - {shell_command: [{cmd: a, enter: off}], focus: "True"}',
      '      - {shell_command: b, enter: On, suppress_history: yes}',
      '  - focus: False',
      '    suppress_history: Yes',
      '    panes: [{focus: no, shell_command: c, enter: YES}]',
    ].join('\n');
    const doc = parseYaml(`${yaml}\n`);
    const [first, second] = doc.windows;
    assert.deepEqual([first?.focus, second?.focus], [true, false]);
    assert.deepEqual(
      first?.panes.map((pane) => [pane.focus, pane.suppressHistory, pane.commands[0]?.enter]),
      [
        [true, false, false],
        [false, true, true],
      ],
    );
    assert.deepEqual(
      second?.panes.map((pane) => [pane.focus, pane.suppressHistory, pane.commands[0]?.enter]),
      [[false, true, true]],
    );
    for (const word of ['tRUE', 'y', 'n', '1', '']) {
      assertRejected(() => parseJson({ session_name: 's', windows: [{ focus: word }] }), { code: 'type', path: 'windows[0].focus' });
    }
  });

  it('reads a command ending in \\; as ending in ;, as tmux reads what tmuxp hands it', () => {
    const doc = parseYaml(String.raw`session_name: s
shell_command_before: cd /srv\;
windows:
  - panes:
      - [echo a\;, {cmd: echo b\;, enter: false}, echo c;, echo d\\;, echo e\; f, echo g\;\;]
`);
    assert.deepEqual(
      doc.windows[0]?.panes[0]?.commands.map((command) => command.text),
      ['cd /srv;', 'echo a;', 'echo b;', 'echo c;', String.raw`echo d\;`, String.raw`echo e\; f`, String.raw`echo g\;;`],
    );
  });

  it('accepts profile and version only together, as drover.workspace version 1', () => {
    const doc = parseJson({ profile: WORKSPACE_PROFILE, version: 1, session_name: 's', windows: [{}] });
    assert.equal(doc.version, 1);
    assertRejected(() => parseJson({ profile: WORKSPACE_PROFILE, session_name: 's', windows: [{}] }), {
      code: 'missing',
      path: 'version',
    });
    assertRejected(() => parseJson({ version: 1, session_name: 's', windows: [{}] }), { code: 'missing', path: 'profile' });
    assertRejected(() => parseJson({ profile: 'tmuxp', version: 1, session_name: 's', windows: [{}] }), {
      code: 'value',
      path: 'profile',
    });
    assertRejected(() => parseJson({ profile: WORKSPACE_PROFILE, version: 2, session_name: 's', windows: [{}] }), {
      code: 'unsupported',
      path: 'version',
      feature: 'workspace_version',
    });
  });

  it('refuses a second focused window or pane', () => {
    assertRejected(() => parseJson({ session_name: 's', windows: [{ focus: true }, { focus: false }, { focus: true }] }), {
      code: 'value',
      path: 'windows[2].focus',
    });
    assertRejected(() => parseJson({ session_name: 's', windows: [{ panes: [{ focus: true }, { focus: true }] }] }), {
      code: 'value',
      path: 'windows[0].panes[1].focus',
    });
  });

  it('refuses two windows with the same window_index', () => {
    assertRejected(() => parseJson({ session_name: 's', windows: [{ window_index: 3 }, {}, { window_index: 3 }] }), {
      code: 'value',
      path: 'windows[2].window_index',
    });
  });

  it('refuses a window_index that the file’s own base-index gives an earlier window', () => {
    const error = assertRejected(() => parseJson({ session_name: 's', options: { 'base-index': 1 }, windows: [{}, { window_index: 1 }] }), {
      code: 'value',
      path: 'windows[1].window_index',
    });
    assert.match(error.reason, /index 1 is already taken by windows\[0\]/);
    assertRejected(() => parseJson({ session_name: 's', options: { 'base-index': 4 }, windows: [{}, {}, { window_index: 5 }] }), {
      code: 'value',
      path: 'windows[2].window_index',
    });
    // Where the first window lands depends on the server's base-index: left to plan --live and load.
    parseJson({ session_name: 's', windows: [{}, { window_index: 1 }] });
    parseJson({ session_name: 's', global_options: { 'base-index': 1 }, windows: [{}, { window_index: 0 }] });
  });

  it('returns a deep-frozen document', () => {
    const doc = parseYaml('session_name: s\nenvironment: {A: b}\nwindows: [{panes: [x]}]\n');
    assert.ok(Object.isFrozen(doc));
    assert.ok(Object.isFrozen(doc.environment));
    assert.ok(Object.isFrozen(doc.windows[0]?.panes[0]?.commands[0]));
    assert.throws(() => {
      (doc.windows as unknown[]).push({});
    }, TypeError);
  });

  it('keeps __proto__ as plain data', () => {
    const doc = parseJson('{"session_name": "s", "environment": {"__proto__": "x"}, "windows": [{}]}');
    assert.ok(Object.hasOwn(doc.environment, '__proto__'));
    assert.equal(Object.getPrototypeOf(doc.environment), Object.prototype);
  });

  it('validates its own options', () => {
    assert.throws(() => parseWorkspace('{}', { format: 'toml' as 'json', baseDir: BASE }), ArgumentError);
    assert.throws(() => parseWorkspace('{}', { format: 'json', baseDir: 'relative' }), ArgumentError);
    assert.throws(() => parseWorkspace('{}', { format: 'json', baseDir: BASE, expandEnv: ['not a name'] }), ArgumentError);
    assert.throws(() => parseWorkspace('{}', { format: 'json', baseDir: BASE, limits: { maxDepth: 0 } }), ArgumentError);
  });
});

describe('parseWorkspace: every problem in one run', () => {
  it('reports all problems of a file, refused features first, each with its path', () => {
    const yaml = [
      'session_name: s',
      'colour: red',
      'windows:',
      '  - window_name: a',
      '    focus: maybe',
      '    panes:',
      '      - shell_command: [{cmd: x, entr: true}, 42]',
      '      - {start_directory: "", focus: 3}',
      '  - window_index: -2',
      '    environment: {1BAD: x, GOOD: $HOME}',
      '    options: {Not-An-Option: 1}',
      '  - plugins_here: 1',
      '    shell_command_after: [x]',
    ].join('\n');
    const error = rejection(() => parseYaml(`${yaml}\n`));
    assert.deepEqual(
      error.problems.map((problem) => [problem.path, problem.code]),
      [
        ['windows[2].shell_command_after', 'unsupported'],
        ['colour', 'unknown_key'],
        ['windows[0].panes[0].shell_command[0].entr', 'unknown_key'],
        ['windows[0].panes[0].shell_command[1]', 'type'],
        ['windows[0].panes[1].start_directory', 'value'],
        ['windows[0].panes[1].focus', 'type'],
        ['windows[0].focus', 'type'],
        ['windows[1].environment.<key 1>', 'value'],
        ['windows[1].environment.GOOD', 'unsupported'],
        ['windows[1].window_index', 'value'],
        ['windows[1].options.Not-An-Option', 'value'],
        ['windows[2].plugins_here', 'unknown_key'],
      ],
    );
    // The error itself is the first problem, and its message lists every one.
    assert.equal(error.path, 'windows[2].shell_command_after');
    assert.equal(error.code, 'unsupported');
    for (const problem of error.problems) assert.ok(error.message.includes(problem.message), problem.message);
  });

  it('reports a single problem as itself', () => {
    const error = rejection(() => parseJson({ session_name: 's', windows: [{ focus: 'maybe' }] }));
    assert.deepEqual(error.problems, [error]);
  });

  it('reports every YAML syntax error with its line', () => {
    const error = rejection(() => parseYaml('session_name: s\nwindows: [a\n  b: }\nx: "unterminated\n'));
    assert.ok(error.problems.length >= 2, error.message);
    for (const problem of error.problems) {
      assert.equal(problem.code, 'syntax');
      assert.ok(typeof problem.line === 'number' && problem.line >= 2, problem.message);
    }
  });

  it('says what is wrong with the YAML in words, at its line and column', () => {
    const cases: [string, number, RegExp][] = [
      ['session_name: s\nwindows:\n  - window_name: a\n   panes: []\n', 4, /the "-" of a list item/],
      ['session_name: s\nwindows:\n\t- window_name: a\n', 3, /a tab is used as indentation/],
      ['session_name: s\nwindows: a: b\n', 2, /a mapping cannot begin on the line of its own key/],
    ];
    for (const [text, line, words] of cases) {
      const error = assertRejected(() => parseYaml(text), { code: 'syntax', path: '$' });
      assert.match(error.message, new RegExp(`invalid YAML at line ${line}, column \\d+: `), error.message);
      assert.match(error.message, words);
    }
  });
});

describe('parseWorkspace: YAML and JSON syntax', () => {
  it('rejects duplicate keys in both formats with their path', () => {
    assertRejected(() => parseYaml('session_name: a\nsession_name: b\nwindows: [{}]\n'), {
      code: 'duplicate_key',
      path: 'session_name',
    });
    assertRejected(() => parseYaml('session_name: a\nwindows:\n  - environment:\n      A: 1\n      A: 2\n'), {
      code: 'duplicate_key',
      path: 'windows[0].environment.A',
    });
    assertRejected(() => parseJson('{"session_name": "a", "windows": [{"panes": [], "panes": []}]}'), {
      code: 'duplicate_key',
      path: 'windows[0].panes',
    });
  });

  it('refuses anchors, aliases, tags, directives, complex keys and extra documents by name', () => {
    const cases: [string, string, string][] = [
      ['session_name: s\nwindows: &w [{}]\n', 'windows', 'yaml_anchor'],
      ['session_name: s\nx: &a 1\nwindows: [{window_name: *a}]\n', 'x', 'yaml_anchor'],
      ['session_name: s\nwindows: [{window_name: *a}]\n', 'windows[0].window_name', 'yaml_alias'],
      ['session_name: !!str s\nwindows: [{}]\n', 'session_name', 'yaml_tag'],
      ['session_name: s\nwindows:\n  - panes: !custom [a]\n', 'windows[0].panes', 'yaml_tag'],
      ['%YAML 1.2\n---\nsession_name: s\nwindows: [{}]\n', '$', 'yaml_directive'],
      ['session_name: s\n? [a, b]\n: 1\nwindows: [{}]\n', '<key 2>', 'yaml_complex_key'],
      ['session_name: s\nwindows: [{}]\n---\nsession_name: t\n', '$', 'multiple_documents'],
    ];
    for (const [text, path, feature] of cases) assertRejected(() => parseYaml(text), { code: 'yaml_feature', path, feature });
  });

  it('does not treat << as a merge', () => {
    assertRejected(() => parseYaml('session_name: s\n<<: {windows: [{}]}\n'), { code: 'unknown_key', path: '<key 2>' });
  });

  it('reports syntax errors with a position and no source text', () => {
    const yaml = assertRejected(() => parseYaml(`session_name: "${SECRET}\nwindows: [{}]\n`), { code: 'syntax', path: '$' });
    assert.ok(!yaml.message.includes('hunter2'));
    assert.equal(typeof yaml.line, 'number');
    const json = assertRejected(() => parseJson(`{"session_name": "s", "windows": [{"window_name": ${SECRET}}]}`), {
      code: 'syntax',
      path: 'windows[0].window_name',
    });
    assert.ok(!json.message.includes('hunter2'));
    assert.equal(json.line, 1);
    assertRejected(() => parseJson('{"session_name": "s", "windows": [{}]} x'), { code: 'syntax', path: '$' });
    assertRejected(() => parseJson('{"session_name": "s\u0001", "windows": [{}]}'), { code: 'syntax', path: 'session_name' });
    assertRejected(() => parseJson("{'session_name': 's'}"), { code: 'syntax', path: '$' });
  });

  it('reads JSON escapes and rejects out-of-range numbers', () => {
    const doc = parseJson('{"session_name": "a\\u00e9\\/\\"b\\"", "windows": [{}]}');
    assert.equal(doc.sessionName, 'aé/"b"');
    assertRejected(() => parseJson('{"session_name": "s", "windows": [{"window_index": 1e999}]}'), {
      code: 'type',
      path: 'windows[0].window_index',
    });
  });

  it('uses the YAML 1.2 core schema: on/yes stay strings, ~ is null, .inf is refused', () => {
    const doc = parseYaml('session_name: s\nwindows:\n  - options: {automatic-rename: on, remain-on-exit: yes}\n    panes: [~]\n');
    assert.deepEqual(doc.windows[0]?.options, { 'automatic-rename': 'on', 'remain-on-exit': 'yes' });
    assert.deepEqual(doc.windows[0]?.panes[0]?.commands, []);
    assertRejected(() => parseYaml('session_name: s\nwindows: [{window_index: .inf}]\n'), {
      code: 'type',
      path: 'windows[0].window_index',
    });
  });
});

describe('parseWorkspace: bounds', () => {
  const deepYamlFlow = (depth: number): string => `session_name: s\nwindows: [{}]\nx: ${'['.repeat(depth)}${']'.repeat(depth)}\n`;

  it('rejects input over 1 MiB, counting bytes', () => {
    const text = `session_name: s\nwindows: [{}]\n# ${'é'.repeat(530_000)}\n`;
    assert.ok(text.length < 1024 * 1024);
    assertRejected(() => parseYaml(text), { code: 'bounds', path: '$' });
  });

  it('rejects nesting deeper than 32 levels in YAML and JSON', () => {
    assertRejected(() => parseYaml(deepYamlFlow(31)), { code: 'unknown_key', path: 'x' });
    const error = rejection(() => parseYaml(deepYamlFlow(32)));
    assert.equal(error.code, 'bounds');
    assert.match(error.path, /^x(\[0\])+$/);
    assertRejected(() => parseYaml(deepYamlFlow(100_000)), { code: 'bounds', path: '$' });
    assertRejected(() => parseYaml(`session_name: s\nx: ${'- '.repeat(100_000)}a\n`), { code: 'bounds', path: '$' });
    const json = rejection(() => parseJson(`{"session_name": "s", "x": ${'['.repeat(40)}${']'.repeat(40)}}`));
    assert.equal(json.code, 'bounds');
    assert.ok(json.path.startsWith('x[0]'));
  });

  it('rejects more than 10 000 nodes', () => {
    const many = Array.from({ length: 6000 }, (_, i) => `  V${i}: x`).join('\n');
    assertRejected(() => parseYaml(`session_name: s\nwindows: [{}]\nenvironment:\n${many}\n`), { code: 'bounds', path: '$' });
    const error = rejection(() => parseJson({ session_name: 's', windows: [{ panes: Array.from({ length: 10_001 }, () => null) }] }));
    assert.equal(error.code, 'bounds');
  });

  it('rejects strings longer than 64 KiB', () => {
    assertRejected(() => parseJson({ session_name: 's', windows: [{ panes: ['x'.repeat(64 * 1024 + 1)] }] }), {
      code: 'bounds',
      path: 'windows[0].panes[0]',
    });
    assert.equal(parseJson({ session_name: 's', windows: [{ panes: ['x'.repeat(64 * 1024)] }] }).windows.length, 1);
  });

  it('rejects more than 128 windows and more than 1024 panes', () => {
    assertRejected(() => parseJson({ session_name: 's', windows: Array.from({ length: 129 }, () => ({})) }), {
      code: 'bounds',
      path: 'windows',
    });
    const windows = Array.from({ length: 9 }, () => ({ panes: Array.from({ length: 120 }, () => null) }));
    assertRejected(() => parseJson({ session_name: 's', windows }), { code: 'bounds', path: 'windows[8].panes[64]' });
  });

  it('bounds the normalized document too (inherited commands multiply)', () => {
    const before = Array.from({ length: 20 }, () => 'x'.repeat(1000));
    const windows = [{ panes: Array.from({ length: 60 }, () => null) }];
    assertRejected(() => parseJson({ session_name: 's', shell_command_before: before, windows }), { code: 'bounds', path: '$' });
  });

  it('takes tighter limits from the caller', () => {
    assertRejected(() => parseJson({ session_name: 's', windows: [{}, {}] }, { limits: { maxWindows: 1 } }), {
      code: 'bounds',
      path: 'windows',
    });
  });
});

describe('parseWorkspace: unsupported features are refused by name', () => {
  const cases: [string, unknown, string, string][] = [
    ['plugins', { session_name: 's', plugins: ['x.Plugin'], windows: [{}] }, 'plugins', 'plugins'],
    ['before_script', { session_name: 's', before_script: './boot.sh', windows: [{}] }, 'before_script', 'before_script'],
    ['shell_command_after', { session_name: 's', windows: [{ shell_command_after: 'x' }] }, 'windows[0].shell_command_after', 'shell_command_after'],
    ['window_shell', { session_name: 's', windows: [{ window_shell: 'top' }] }, 'windows[0].window_shell', 'window_shell'],
    ['pane shell', { session_name: 's', windows: [{ panes: [{ shell: 'top' }] }] }, 'windows[0].panes[0].shell', 'pane_shell'],
    ['workspace_builder', { session_name: 's', workspace_builder_options: {}, windows: [{}] }, 'workspace_builder_options', 'workspace_builder'],
    ['if', { session_name: 's', windows: [{ if: 'x' }] }, 'windows[0].if', 'conditions'],
    ['tmuxinator', { name: 's', root: '~/x', windows: [{}] }, 'name', 'tmuxinator'],
    ['window pre', { session_name: 's', windows: [{ pre: 'x' }] }, 'windows[0].pre', 'tmuxinator'],
  ];
  for (const [title, value, path, feature] of cases) {
    it(title, () => {
      assertRejected(() => parseJson(value), { code: 'unsupported', path, feature });
    });
  }

  it('points tmuxinator projects to the importer, once per key', () => {
    const error = rejection(() => parseJson({ name: 's', root: '~/x', windows: [{}] }));
    assert.match(error.message, /^name: this is a tmuxinator key; convert the project with `drover workspace import tmuxinator FILE`/);
    assert.deepEqual(
      error.problems.map((problem) => `${problem.path} ${problem.code}`),
      ['name unsupported', 'root unsupported', 'session_name missing'],
    );
  });

  it('reports an unsupported feature before any type error elsewhere', () => {
    assertRejected(() => parseJson({ session_name: 5, windows: [{ panes: [{ shell: 'top' }] }] }), {
      code: 'unsupported',
      path: 'windows[0].panes[0].shell',
      feature: 'pane_shell',
    });
  });

  it('refuses template placeholders in any non-command string', () => {
    assertRejected(() => parseYaml('session_name: s\nstart_directory: {HOME}\nwindows: [{}]\n'), {
      code: 'unsupported',
      path: 'start_directory',
      feature: 'template_placeholder',
    });
    assertRejected(() => parseJson({ session_name: 's {USER}', windows: [{}] }), {
      code: 'unsupported',
      path: 'session_name',
      feature: 'template_placeholder',
    });
  });

  it('refuses ~user directories', () => {
    assertRejected(() => parseJson({ session_name: 's', start_directory: '~root/x', windows: [{}] }), {
      code: 'unsupported',
      path: 'start_directory',
      feature: 'user_home',
    });
  });
});

describe('parseWorkspace: environment expansion', () => {
  const file = {
    session_name: 'dev ${PROJECT}',
    start_directory: '$ROOT/src',
    environment: { TOKEN: '${TOKEN}' },
    windows: [{ options: { 'main-pane-height': '${HEIGHT}' }, panes: ['echo $HOME ${PROJECT}'] }],
  };
  const env = { PROJECT: 'drover', ROOT: '/srv', TOKEN: SECRET, HEIGHT: '30' };

  it('is off by default: references are refused by name, without values', () => {
    const error = assertRejected(() => parseJson(file, { env }), {
      code: 'unsupported',
      path: 'session_name',
      feature: 'environment_expansion',
    });
    assert.match(error.message, /PROJECT/);
  });

  it('substitutes only from the supplied mapping when enabled', () => {
    const doc = parseJson(file, { expandEnv: true, env });
    assert.equal(doc.sessionName, 'dev drover');
    assert.equal(doc.startDirectory, '/srv/src');
    assert.equal(doc.environment.TOKEN, SECRET);
    assert.equal(doc.windows[0]?.options['main-pane-height'], '30');
  });

  it('keeps shell command text exactly as authored', () => {
    const doc = parseJson(file, { expandEnv: true, env });
    assert.equal(doc.windows[0]?.panes[0]?.commands[0]?.text, 'echo $HOME ${PROJECT}');
  });

  it('expands only the names it was asked to', () => {
    assertRejected(() => parseJson(file, { expandEnv: ['PROJECT', 'ROOT'], env }), {
      code: 'unsupported',
      path: 'environment.TOKEN',
      feature: 'environment_expansion',
    });
  });

  it('fails on a named variable the mapping lacks, and never reads the process environment', () => {
    process.env.DROVER_TEST_ONLY_IN_PROCESS = 'present';
    try {
      assertRejected(
        () => parseJson({ session_name: '${DROVER_TEST_ONLY_IN_PROCESS}', windows: [{}] }, { expandEnv: true }),
        { code: 'expansion', path: 'session_name' },
      );
    } finally {
      delete process.env.DROVER_TEST_ONLY_IN_PROCESS;
    }
  });

  it('refuses forms it cannot expand', () => {
    for (const value of ['${A:-b}', '$1', '${unterminated']) {
      assertRejected(() => parseJson({ session_name: value, windows: [{}] }, { expandEnv: true, env: { A: 'a' } }), {
        code: 'unsupported',
        path: 'session_name',
        feature: 'environment_expansion',
      });
    }
  });

  it('leaves a lone $ and tmux formats alone', () => {
    const doc = parseJson({
      session_name: 'cost $ 5',
      windows: [{ options: { 'window-status-format': '#{window_index}:#{window_name}' } }],
    });
    assert.equal(doc.sessionName, 'cost $ 5');
    assert.equal(doc.windows[0]?.options['window-status-format'], '#{window_index}:#{window_name}');
  });
});

describe('parseWorkspace: directories', () => {
  it('resolves relative directories against the enclosing level, then the file', () => {
    const doc = parseJson({
      session_name: 's',
      start_directory: './app',
      windows: [
        { panes: [null] },
        { start_directory: 'log', panes: [{ start_directory: '../tmp' }, null] },
        { start_directory: '~', panes: [{ start_directory: 'projects/' }] },
        { start_directory: '/var//cache/', panes: [null] },
      ],
    });
    assert.equal(doc.startDirectory, `${BASE}/app`);
    assert.deepEqual(
      doc.windows.map((window) => [window.startDirectory, ...window.panes.map((pane) => pane.startDirectory)]),
      [
        [`${BASE}/app`, `${BASE}/app`],
        [`${BASE}/app/log`, `${BASE}/app/tmp`, `${BASE}/app/log`],
        [HOME, `${HOME}/projects`],
        ['/var/cache', '/var/cache'],
      ],
    );
  });

  it('resolves against the file directory when no level sets one', () => {
    const doc = parseJson({ session_name: 's', windows: [{ start_directory: './', panes: [null, { start_directory: '..' }] }] });
    assert.deepEqual(doc.windows[0]?.panes.map((pane) => pane.startDirectory), [BASE, '/srv']);
    assert.equal(parseJson({ session_name: 's', windows: [{}] }).windows[0]?.panes[0]?.startDirectory, null);
  });

  it('rejects empty directories', () => {
    assertRejected(() => parseJson({ session_name: 's', windows: [{ start_directory: '' }] }), {
      code: 'value',
      path: 'windows[0].start_directory',
    });
  });
});

describe('parseWorkspace: environment and options', () => {
  it('layers window environment under pane environment and keeps the session environment separate', () => {
    const doc = parseJson({
      session_name: 's',
      environment: { A: 'session' },
      windows: [{ environment: { A: 'window', B: 'window' }, panes: [null, { environment: { B: 'pane', C: 3 } }] }],
    });
    assert.deepEqual(doc.environment, { A: 'session' });
    assert.deepEqual(doc.windows[0]?.panes[0]?.environment, { A: 'window', B: 'window' });
    assert.deepEqual(doc.windows[0]?.panes[1]?.environment, { A: 'window', B: 'pane', C: '3' });
  });

  it('expands ~ and ./ in environment values as tmuxp does', () => {
    const doc = parseJson({ session_name: 's', environment: { K: '~/.kube', P: './bin', D: '.venv' }, windows: [{}] });
    assert.deepEqual(doc.environment, { K: `${HOME}/.kube`, P: `${BASE}/bin`, D: '.venv' });
  });

  it('rejects bad environment names and values without echoing them', () => {
    assertRejected(() => parseJson({ session_name: 's', environment: { 'A-B': 'x' }, windows: [{}] }), {
      code: 'value',
      path: 'environment.A-B',
    });
    const error = assertRejected(() => parseJson({ session_name: 's', environment: { A: true }, windows: [{}] }), {
      code: 'type',
      path: 'environment.A',
    });
    assert.match(error.message, /found a boolean/);
  });

  it('turns option values into tmux text and checks option names', () => {
    const doc = parseJson({
      session_name: 's',
      options: { 'base-index': 1, mouse: true, 'status-left': 'x' },
      global_options: { 'status-format[1]': '', '@drover_role': 'director' },
      windows: [{ options: { 'synchronize-panes': false } }],
    });
    assert.deepEqual(doc.options, { 'base-index': '1', mouse: 'on', 'status-left': 'x' });
    assert.deepEqual(doc.globalOptions, { 'status-format[1]': '', '@drover_role': 'director' });
    assert.deepEqual(doc.windows[0]?.options, { 'synchronize-panes': 'off' });
    assertRejected(() => parseJson({ session_name: 's', options: { 'Bad Name': 1 }, windows: [{}] }), {
      code: 'value',
      path: 'options.<key 1>',
    });
    assertRejected(() => parseJson({ session_name: 's', options: { 'history-limit': 1.5 }, windows: [{}] }), {
      code: 'type',
      path: 'options.history-limit',
    });
    assertRejected(() => parseJson({ session_name: 's', options: { mouse: null }, windows: [{}] }), {
      code: 'type',
      path: 'options.mouse',
    });
  });
});

describe('parseWorkspace: panes and commands', () => {
  const panesOf = (panes: unknown[], extra: Record<string, unknown> = {}) =>
    parseJson({ session_name: 's', windows: [{ panes, ...extra }] }).windows[0]?.panes ?? [];

  it('accepts every tmuxp pane shorthand', () => {
    const panes = panesOf([
      'a',
      ['b', 'c'],
      null,
      'pane',
      'blank',
      { shell_command: null },
      { shell_command: ['pane'] },
      { shell_command: [null] },
      { shell_command: 'd' },
      { shell_command: [{ cmd: 'e' }, 'f'] },
      '',
      { shell_command: ['pane', 'g'] },
    ]);
    assert.deepEqual(
      panes.map((pane) => pane.commands.map((command) => command.text)),
      [['a'], ['b', 'c'], [], [], [], [], [], [], ['d'], ['e', 'f'], [''], ['pane', 'g']],
    );
  });

  it('gives a window without panes one blank pane', () => {
    assert.equal(panesOf([]).length, 1);
    assert.equal(parseJson({ session_name: 's', windows: [{}] }).windows[0]?.panes.length, 1);
  });

  it('rejects null among several commands and commands without cmd', () => {
    assertRejected(() => panesOf([{ shell_command: [null, 'x'] }]), { code: 'type', path: 'windows[0].panes[0].shell_command[0]' });
    assertRejected(() => panesOf([{ shell_command: [{ enter: false }] }]), {
      code: 'missing',
      path: 'windows[0].panes[0].shell_command[0].cmd',
    });
  });

  it('prepends shell_command_before from session, window and pane, in that order', () => {
    const doc = parseJson({
      session_name: 's',
      shell_command_before: ['s1', { cmd: 's2', sleep_before: 1 }],
      windows: [{ shell_command_before: 'w1', panes: [{ shell_command_before: ['p1'], shell_command: 'own' }, null] }],
    });
    assert.deepEqual(
      doc.windows[0]?.panes.map((pane) => pane.commands.map((command) => command.text)),
      [
        ['s1', 's2', 'w1', 'p1', 'own'],
        ['s1', 's2', 'w1'],
      ],
    );
    assert.equal(doc.windows[0]?.panes[0]?.commands[1]?.sleepBeforeMs, 1000);
  });

  it('resolves enter and sleeps per command, pane values as defaults', () => {
    const [pane] = panesOf([
      {
        enter: false,
        sleep_after: 0.25,
        shell_command: ['a', { cmd: 'b', enter: true, sleep_after: 0 }, { cmd: 'c', sleep_before: 1.5 }],
      },
    ]);
    assert.deepEqual(pane?.commands, [
      { text: 'a', enter: false, sleepBeforeMs: 0, sleepAfterMs: 250 },
      { text: 'b', enter: true, sleepBeforeMs: 0, sleepAfterMs: 0 },
      { text: 'c', enter: false, sleepBeforeMs: 1500, sleepAfterMs: 250 },
    ]);
    assertRejected(() => panesOf([{ sleep_before: -1 }]), { code: 'value', path: 'windows[0].panes[0].sleep_before' });
    assertRejected(() => panesOf([{ enter: 'nope' }]), { code: 'type', path: 'windows[0].panes[0].enter' });
  });

  it('inherits suppress_history session -> window -> pane, defaulting to on', () => {
    const doc = parseJson({
      session_name: 's',
      suppress_history: false,
      windows: [{ panes: [null] }, { suppress_history: true, panes: [null, { suppress_history: false }] }],
    });
    assert.deepEqual(
      doc.windows.map((window) => window.panes.map((pane) => pane.suppressHistory)),
      [[false], [true, false]],
    );
    assert.equal(parseJson({ session_name: 's', windows: [{}] }).windows[0]?.panes[0]?.suppressHistory, true);
  });
});

describe('parseWorkspace: layouts', () => {
  const layoutOf = (layout: string, panes = 2) =>
    parseJson({ session_name: 's', windows: [{ layout, panes: Array.from({ length: panes }, () => null) }] }).windows[0]?.layout;

  it('resolves unique abbreviations to the full name', () => {
    assert.equal(layoutOf('main-v'), 'main-vertical');
    assert.equal(layoutOf('t'), 'tiled');
    assert.equal(layoutOf('even-horizontal'), 'even-horizontal');
  });

  it('rejects ambiguous and unknown names', () => {
    for (const layout of ['e', 'main', 'grid', '']) {
      assertRejected(() => layoutOf(layout), { code: 'value', path: 'windows[0].layout' });
    }
  });

  it('accepts saved layout strings with a right checksum and enough cells', () => {
    const saved = '8be7,80x24,0,0{78x24,0,0,1,1x24,79,0,2}';
    assert.equal(layoutOf(saved), saved);
    assertRejected(() => layoutOf('8be8,80x24,0,0{78x24,0,0,1,1x24,79,0,2}'), { code: 'value', path: 'windows[0].layout' });
    assertRejected(() => layoutOf(saved, 3), { code: 'value', path: 'windows[0].layout' });
  });
});

describe('canonical document', () => {
  const authored = `
session_name: agents
start_directory: ./repo
shell_command_before: [source .env]
environment: {MODE: dev}
options: {base-index: 1}
windows:
  - window_name: director
    window_index: 3
    layout: main-v
    environment: {ROLE: director}
    options: {main-pane-width: 100}
    options_after: {synchronize-panes: off}
    focus: true
    panes:
      - shell_command: [{cmd: claude, sleep_after: 0.5}]
        focus: true
      - {shell_command: codex, enter: false, environment: {ROLE: agent}}
      - null
  - panes: [gemini]
    suppress_history: false
`;

  it('serializes to JSON that parses back to an equal document, from any directory', () => {
    const doc = parseYaml(authored);
    const again = parseWorkspace(JSON.stringify(workspaceToJSON(doc)), { format: 'json', baseDir: '/elsewhere', homeDir: '/x' });
    assert.deepEqual(again, doc);
    assert.deepEqual(workspaceToJSON(again), workspaceToJSON(doc));
  });

  it('records resolved inheritance explicitly', () => {
    const data = workspaceToJSON(parseYaml(authored)) as { windows: { panes: unknown[]; layout: string }[] };
    assert.equal(data.windows[0]?.layout, 'main-vertical');
    assert.deepEqual(data.windows[0]?.panes[1], {
      shell_command: [
        { cmd: 'source .env', enter: false },
        { cmd: 'codex', enter: false },
      ],
      start_directory: `${BASE}/repo`,
      environment: { ROLE: 'agent' },
      suppress_history: true,
    });
  });
});
