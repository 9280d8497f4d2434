/**
 * Records the screens of ordinary programs — shells, REPLs, tracebacks, prompts answered and
 * not, pagers — in a real tmux pane, for the question corpus (test/panes/screen-corpus.test.ts).
 * Each screen is written as test/fixtures/screens/programs/<name>.ansi with its .json: the
 * pane's size and cursor, what was done, whether it asks a person something and, if so, the
 * indicator class that describes the question. Run by hand (not part of the suite), then review the
 * screens and their verdicts:
 *   npx tsc -p tsconfig.json && node dist/test/panes/record-screens.js [name…]
 * Needs bash, python3, node, npm, bc, sqlite3, git, ssh-keygen, less, more, man and vim.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { QuestionIndicator } from '../../src/panes/index.js';
import type { Pane } from '../../src/tmux/index.js';
import { waitFor } from '../agents/probe.js';
import { captureAgentScreen, writeScreenFixture } from '../agents/record.js';
import { PROGRAM_SCREENS } from '../agents/screens/fixtures.js';
import { startTestServer } from '../support/tmux.js';


/** A line typed and entered, keys sent as tmux names them, or text typed without Enter; then what the screen must show. */
type Step = { line: string; then?: string } | { keys: readonly string[]; then?: string } | { text: string; then?: string };

interface Scenario {
  name: string;
  /** The program whose screen it is. */
  program: string;
  /** What was done, and why the screen asks or does not. */
  note: string;
  /** Whether the screen asks a person something (the truth, whatever the judgement says). */
  asks: boolean;
  /** For a screen that asks: the indicator class that describes its question; null when no class does. */
  indicator?: QuestionIndicator | null;
  steps: readonly Step[];
  width?: number;
  height?: number;
}

const line = (text: string, then?: string): Step => ({ line: text, then });
const keys = (names: readonly string[], then?: string): Step => ({ keys: names, then });
const typed = (text: string, then?: string): Step => ({ text, then });

const PYTHON_RAISE = 'python3 -c $\'def load(path):\\n    raise ValueError("no config at " + path)\\nload("app.toml")\'';

export const SCENARIOS: readonly Scenario[] = [
  { name: 'bash-prompt', program: 'bash', asks: false, note: 'a shell at its prompt after two commands', steps: [line('ls -a', '..'), line('echo build finished', 'build finished')] },
  {
    name: 'bash-history-questions',
    program: 'bash',
    asks: false,
    note: 'shell history full of lines that look like questions, the cursor at a fresh prompt below them',
    steps: [
      line("echo 'Continue with the migration? [y/n]'"),
      line("echo 'Do you want to deploy to production?'"),
      line("echo 'Name of the release branch:'"),
      line("printf '1) staging\\n2) production\\n'"),
      line("echo 'Press any key to continue'"),
      line("echo 'Which branch should the fix go on?'", 'fix go on?\n$'),
    ],
  },
  { name: 'bash-ctrl-c', program: 'bash', asks: false, note: 'a command interrupted with Ctrl-C: ^C echoed, then a new prompt', steps: [line('sleep 600'), keys(['C-c'], '^C')] },
  {
    name: 'bash-ctrl-c-typed',
    program: 'bash',
    asks: false,
    note: 'a question printed, then a half-typed line abandoned with Ctrl-C',
    steps: [line("echo 'Overwrite config.toml? [y/n]'", '[y/n]\n$'), typed('y and then some'), keys(['C-c'], '^C')],
  },
  { name: 'bash-read-yes-no', program: 'bash', asks: true, indicator: 'yes_no', note: 'read -p waits for a y/n answer, the cursor after the prompt', steps: [line("read -p 'Delete build dir? [y/n] ' answer", 'Delete build dir? [y/n]')] },
  {
    name: 'bash-read-yes-no-typed',
    program: 'bash',
    asks: true, indicator: 'yes_no',
    note: 'read -p with y typed and Enter not pressed yet: still waiting, the cursor on the prompt line',
    steps: [line("read -p 'Delete build dir? [y/n] ' answer", 'Delete build dir? [y/n]'), typed('y', '[y/n] y')],
  },
  {
    name: 'bash-read-yes-no-answered-running',
    program: 'bash',
    asks: false,
    note: 'the y/n prompt answered with y; the script goes on (sleeping), the cursor on the row below the answer',
    steps: [line("read -p 'Delete build dir? [y/n] ' answer; sleep 600", 'Delete build dir? [y/n]'), line('y')],
  },
  {
    name: 'bash-read-yes-no-answered-done',
    program: 'bash',
    asks: false,
    note: 'the y/n prompt answered with y; the script printed its work and the shell prompts again',
    steps: [line("read -p 'Delete build dir? [y/n] ' answer; echo \"deleting build/ ($answer)\"", 'Delete build dir? [y/n]'), line('y', 'deleting build/')],
  },
  { name: 'bash-read-colon', program: 'bash', asks: true, indicator: 'colon_prompt', note: 'read -p asks for a branch name', steps: [line("read -p 'Name of the release branch: ' branch", 'release branch:')] },
  {
    name: 'bash-read-colon-answered',
    program: 'bash',
    asks: false,
    note: 'the branch name given; the script goes on (sleeping) below it',
    steps: [line("read -p 'Name of the release branch: ' branch; sleep 600", 'release branch:'), line('release/2.5')],
  },
  { name: 'bash-read-password', program: 'bash', asks: true, indicator: 'colon_prompt', note: 'read -s asks for a password', steps: [line("read -s -p 'Password: ' secret", 'Password:')] },
  {
    name: 'bash-read-press-key',
    program: 'bash',
    asks: true, indicator: 'press_key',
    note: 'read -n1 waits for any key',
    steps: [line("read -n1 -s -p 'Build finished. Press any key to continue' key", 'Press any key')],
  },
  {
    name: 'bash-read-next-line',
    program: 'bash',
    asks: true, indicator: 'question_mark',
    note: 'the question printed with a line break, read waiting on the row below it',
    steps: [line("echo 'Which branch should the fix go on?'; read branch", 'fix go on?')],
  },
  {
    name: 'bash-select',
    program: 'bash',
    asks: true, indicator: 'question_mark',
    note: "bash's select menu waits at its #? prompt",
    steps: [line('select target in staging production both; do break; done', '#?')],
  },
  {
    name: 'bash-wrapped-yes-no',
    program: 'bash',
    asks: true, indicator: 'yes_no',
    note: 'a y/n question longer than the pane is wide, wrapped over two rows, the cursor after it',
    width: 50,
    steps: [line("read -p 'Remove every file under build/ and dist/ and the cache before rebuilding? [y/n] ' answer", '[y/n]')],
  },
  {
    name: 'bash-read-answered-next-line',
    program: 'bash',
    asks: false,
    note: 'the question printed with a line break, answered on the row below it; the script goes on (sleeping)',
    steps: [line("echo 'Name of the release branch:'; read branch; sleep 600", 'release branch:'), line('release/2.5')],
  },
  {
    name: 'bash-read-enumerated',
    program: 'bash',
    asks: true,
    indicator: 'enumerated_options',
    note: 'read -p offers numbered targets on one line',
    steps: [line("read -p 'Pick a target: 1) staging 2) production ' target", 'production')],
  },
  {
    name: 'bash-read-enumerated-answered',
    program: 'bash',
    asks: false,
    note: 'the numbered targets answered with 2; the script goes on (sleeping) below',
    steps: [line("read -p 'Pick a target: 1) staging 2) production ' target; sleep 600", 'production'), line('2')],
  },
  {
    name: 'bash-read-default-yes',
    program: 'bash',
    asks: true,
    indicator: 'yes_no',
    note: "an apt-style confirmation with its default in capitals: Do you want to continue? [Y/n]",
    steps: [line("echo 'After this operation, 2 MB of disk space will be freed.'; read -p 'Do you want to continue? [Y/n] ' answer", '[Y/n]')],
  },
  {
    name: 'bash-read-sudo-style',
    program: 'bash',
    asks: true,
    indicator: 'colon_prompt',
    note: 'a password prompt in the style of sudo: [sudo] password for deploy:',
    steps: [line("read -s -p '[sudo] password for deploy: ' secret", 'password for deploy:')],
  },
  {
    name: 'bash-two-line-prompt',
    program: 'bash',
    asks: false,
    note: 'a two-line shell prompt (the directory, then ❯) after a failed command',
    steps: [line("PS1='\\W\\n❯ '"), line('ls no-such-file', 'No such file')],
  },
  {
    name: 'rm-interactive',
    program: 'rm',
    asks: true, indicator: 'question_mark',
    note: 'rm -i asks before removing a file',
    steps: [line('touch build.log'), line('rm -i build.log', 'remove regular empty file')],
  },
  {
    name: 'git-add-patch',
    program: 'git',
    asks: true, indicator: 'question_mark',
    note: 'git add -p asks whether to stage a hunk',
    height: 30,
    steps: [
      line('git init -q && echo one > notes.txt && git add notes.txt && git commit -qm first && echo two >> notes.txt && clear'),
      line('git add -p', 'Stage this hunk'),
    ],
  },
  {
    name: 'git-clean-interactive',
    program: 'git',
    asks: true,
    indicator: null,
    note: "git clean -i's menu waits at its `What now>` prompt: a question no indicator class describes",
    height: 30,
    steps: [line('git init -q && touch scratch.txt && clear'), line('git clean -i', 'What now>')],
  },
  {
    name: 'ssh-keygen-passphrase',
    program: 'ssh-keygen',
    asks: true, indicator: 'colon_prompt',
    note: 'ssh-keygen asks for a passphrase',
    steps: [line('ssh-keygen -q -t ed25519 -f deploy-key -C deploy', 'passphrase')],
  },
  {
    name: 'npm-init',
    program: 'npm',
    asks: true, indicator: 'colon_prompt',
    note: 'npm init asks for the package name, its default in parentheses',
    height: 30,
    steps: [line('npm init', 'package name:')],
  },
  {
    name: 'ssh-keygen-passphrase-again',
    program: 'ssh-keygen',
    asks: true,
    indicator: 'colon_prompt',
    note: 'ssh-keygen asks for the passphrase a second time, the first prompt answered above it',
    steps: [line('ssh-keygen -q -t ed25519 -f deploy-key -C deploy', 'passphrase'), line('', 'again')],
  },
  {
    name: 'python-getpass',
    program: 'python3',
    asks: true,
    indicator: 'colon_prompt',
    note: "getpass's Password: prompt",
    steps: [line("python3 -c 'import getpass; getpass.getpass()'", 'Password:')],
  },
  {
    name: 'python-repl-continuation',
    program: 'python3',
    asks: false,
    note: 'the Python REPL inside a for statement, at its ... continuation prompt',
    steps: [line('python3 -q', '>>>'), line('for target in ("staging", "production"):', '...')],
  },
  {
    name: 'npm-init-second',
    program: 'npm',
    asks: true,
    indicator: 'colon_prompt',
    note: 'npm init took the package name and asks for the version, its default in parentheses',
    height: 30,
    steps: [line('npm init', 'package name:'), line('', 'version:')],
  },
  {
    name: 'bash-heredoc',
    program: 'bash',
    asks: false,
    note: 'bash reading a here-document at its > continuation prompt',
    steps: [line('cat <<EOF', '\n>'), line('Continue? [y/n]', ']\n>')],
  },
  {
    name: 'python-repl-ctrl-c',
    program: 'python3',
    asks: false,
    note: 'the Python REPL after Ctrl-C: KeyboardInterrupt and a new >>> prompt',
    steps: [line('python3 -q', '>>>'), typed('import this'), keys(['C-c'], 'KeyboardInterrupt')],
  },
  { name: 'python-traceback', program: 'python3', asks: false, note: 'a script raised: its traceback, then the shell prompt', steps: [line(PYTHON_RAISE, 'ValueError')] },
  {
    name: 'python-keyboard-interrupt',
    program: 'python3',
    asks: false,
    note: 'a script interrupted with Ctrl-C: ^C and Traceback (most recent call last): on one row, KeyboardInterrupt, the shell prompt',
    steps: [line('python3 -c \'import time; print("wait" + "ing"); time.sleep(600)\'', '\nwaiting'), keys(['C-c'], 'KeyboardInterrupt')],
  },
  {
    name: 'python-traceback-running',
    program: 'python3',
    asks: false,
    note: 'a server logged a traceback and runs on: the cursor on the row below the traceback',
    steps: [line('python3 -c $\'import time, traceback\\ntry:\\n    {}["port"]\\nexcept KeyError:\\n    traceback.print_exc()\\ntime.sleep(600)\'', 'KeyError')],
  },
  {
    name: 'python-chained-traceback',
    program: 'python3',
    asks: false,
    note: 'chained exceptions: "During handling of the above exception, another exception occurred:" between two tracebacks',
    height: 30,
    steps: [line('python3 -c $\'try:\\n    int("x")\\nexcept ValueError:\\n    raise RuntimeError("bad port")\'', 'RuntimeError')],
  },
  { name: 'python-repl', program: 'python3', asks: false, note: 'the Python REPL after a result, at its >>> prompt', steps: [line('python3 -q', '>>>'), line('1 + 1', '2\n>>>')] },
  {
    name: 'python-repl-traceback',
    program: 'python3',
    asks: false,
    note: 'the Python REPL after a NameError traceback, at its >>> prompt',
    steps: [line('python3 -q', '>>>'), line('deploy()', 'NameError')],
  },
  {
    name: 'python-input-question',
    program: 'python3',
    asks: true, indicator: 'question_mark',
    note: 'input() asks a question',
    steps: [line('python3 -c \'input("Which branch should the fix go on? ")\'', 'fix go on?')],
  },
  {
    name: 'python-menu-input',
    program: 'python3',
    asks: true, indicator: 'colon_prompt',
    note: 'a numbered menu printed, then input() asks for a choice',
    steps: [line('python3 -c \'print("Select a deployment target\\n  1) staging\\n  2) production\\n  3) both"); input("Choice [1-3]: ")\'', 'Choice')],
  },
  { name: 'node-stack-trace', program: 'node', asks: false, note: 'a Node script threw: its stack trace, then the shell prompt', steps: [line('node -e \'function load() { throw new Error("no config") } load()\'', 'Node.js')] },
  {
    name: 'node-stack-running',
    program: 'node',
    asks: false,
    note: 'a Node server logged a stack trace and runs on: the cursor on the row below the last frame',
    steps: [line('node -e \'console.error(new Error("upstream timed out").stack); setTimeout(() => {}, 600000)\'', 'at ')],
  },
  { name: 'node-repl', program: 'node', asks: false, note: "Node's REPL after a result, at its > prompt", steps: [line('node', 'Welcome'), line('1 + 1', '2\n>')] },
  {
    name: 'node-repl-error',
    program: 'node',
    asks: false,
    note: "Node's REPL after an uncaught ReferenceError, at its > prompt",
    steps: [line('node', 'Welcome'), line('deploy()', 'Uncaught')],
  },
  { name: 'bc-session', program: 'bc', asks: false, note: 'bc after two results, waiting on an empty row', steps: [line('bc -q'), line('2 + 2', '4'), line('scale = 3; 1 / 3', '.333')] },
  { name: 'bc-banner', program: 'bc', asks: false, note: "bc's banner, waiting on an empty row", steps: [line('bc', 'warranty')] },
  {
    name: 'sqlite3-session',
    program: 'sqlite3',
    asks: false,
    note: 'sqlite3 after a query, at its sqlite> prompt',
    steps: [line('sqlite3', 'sqlite>'), line("create table t(name); insert into t values ('staging'), ('production');"), line('select * from t;', 'production\nsqlite>')],
  },
  {
    name: 'sqlite3-continuation',
    program: 'sqlite3',
    asks: false,
    note: 'sqlite3 waiting for the rest of a statement at its continuation prompt',
    steps: [line('sqlite3', 'sqlite>'), line('select 1', '...>')],
  },
  { name: 'less-pager', program: 'less', asks: false, note: 'less paging a long output, at its : prompt', steps: [line('seq 1 200 | less', ':')] },
  { name: 'less-end', program: 'less', asks: false, note: 'less at the end of a file, showing (END)', steps: [line('seq 1 200 | less'), keys(['G'], '(END)')] },
  { name: 'more-pager', program: 'more', asks: false, note: 'more paging a long output, at --More--', steps: [line('seq 1 200 | more', '--More--')] },
  { name: 'man-page', program: 'man', asks: false, note: "man's pager prompt: Manual page ls(1) … (press h for help or q to quit)", steps: [line('man ls', 'press h for help')] },
  { name: 'vim-empty', program: 'vim', asks: false, note: 'vim editing a new file, the cursor at the top left', steps: [line('vim -u NONE notes.txt', '"notes.txt"')] },
];

/** Polls until two reads a moment apart show the same screen and cursor. */
async function settled(pane: Pane): Promise<void> {
  let last = '';
  for (let tries = 0; tries < 50; tries += 1) {
    const { capture, screen } = await captureAgentScreen(pane);
    const now = `${JSON.stringify(screen.cursor)}\n${capture}`;
    if (now === last) return;
    last = now;
    await delay(400);
  }
  throw new Error(`${pane.id} never settled`);
}

const shows = (text: string) => (lines: readonly string[]) => lines.join('\n').includes(text);

/**
 * The search path of the recording shell: the system's Python rather than a version manager's
 * shims (tmux gives a new pane the client's PATH, so it is set by the pane's command).
 */
function shellPath(): string {
  return (process.env.PATH ?? '/usr/bin:/bin')
    .split(':')
    .filter((dir) => !dir.includes('pyenv'))
    .join(':');
}

/** The environment of the recording shell: no user's history or home, a plain prompt. */
function shellEnvironment(home: string): Record<string, string> {
  return {
    HOME: home,
    PS1: '$ ',
    HISTFILE: '/dev/null',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    MANWIDTH: '80',
    GIT_AUTHOR_NAME: 'Drover Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Drover Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
    GIT_CONFIG_NOSYSTEM: '1',
  };
}

async function record(scenario: Scenario, root: string): Promise<void> {
  const server = await startTestServer();
  const home = join(root, scenario.name);
  const cwd = join(home, 'app');
  mkdirSync(cwd, { recursive: true });
  try {
    const { pane } = await server.newSession({
      command: ['env', `PATH=${shellPath()}`, 'bash', '--norc', '--noprofile', '-i'],
      env: shellEnvironment(home),
      cwd,
      width: scenario.width ?? 80,
      height: scenario.height ?? 24,
      receipt: true,
    });
    await waitFor(pane, 'the shell prompt', shows('$'));
    for (const step of scenario.steps) {
      if ('line' in step) {
        await pane.sendText(step.line);
        await pane.sendKeys(['Enter']);
      } else if ('keys' in step) await pane.sendKeys(step.keys);
      else await pane.sendText(step.text);
      if (step.then !== undefined) await waitFor(pane, JSON.stringify(step.then), shows(step.then));
      await settled(pane);
    }
    const capture = await writeScreenFixture(pane, PROGRAM_SCREENS, scenario.name, {
      program: scenario.program,
      note: scenario.note,
      asks: scenario.asks,
      indicator: scenario.indicator ?? null,
    });
    const machinePath = [root, homedir(), tmpdir()].find((path) => capture.includes(path));
    if (machinePath !== undefined) {
      for (const ext of ['ansi', 'json']) rmSync(`${PROGRAM_SCREENS}${scenario.name}.${ext}`);
      throw new Error(`${scenario.name} shows a path of this machine (${machinePath}); change the scenario`);
    }
    process.stdout.write(`recorded ${scenario.name}\n`);
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
  if (unknown.length > 0) throw new Error(`no scenario named ${unknown.join(', ')}`);
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'drover-record-')));
  try {
    for (const scenario of SCENARIOS) if (wanted.length === 0 || wanted.includes(scenario.name)) await record(scenario, root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
