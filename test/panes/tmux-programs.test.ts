import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { paneDeliver } from '../../src/panes/index.js';
import type { Pane } from '../../src/tmux/index.js';
import { useTestServer } from '../support/tmux.js';
import { eventually, portOn, screenOf, screenShows } from './live.js';

/**
 * A line editor in raw mode that echoes what is typed and honours C-u and Backspace, but
 * takes no line: Enter does nothing (`ignore`), or only marks the top row and leaves the text
 * where it was (`mark`), as a program that redraws on Enter without reading the line would.
 */
function stubbornEditor(onEnter: 'ignore' | 'mark'): string[] {
  const enter = onEnter === 'mark' ? `process.stdout.write('\\x1b7\\x1b[1;1H[enter seen]\\x1b8');` : '';
  const script = `
    process.stdin.setRawMode(true);
    process.stdout.write('edit> ');
    let line = '';
    process.stdin.on('data', (data) => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\\r') { ${enter} }
        else if (ch === '\\x15') { line = ''; process.stdout.write('\\r\\x1b[Kedit> '); }
        else if (ch === '\\x7f') { if (line.length > 0) { line = line.slice(0, -1); process.stdout.write('\\b \\b'); } }
        else if (ch === '\\x03') process.exit(0);
        else if (ch >= ' ') { line += ch; process.stdout.write(ch); }
      }
    });`;
  return ['node', '-e', script];
}

const TEXT = 'hello-drover-42';

describe('delivery into programs drover has no screen rules for, in real tmux', () => {
  const live = useTestServer();

  async function start(command: readonly string[], ready: string, size: { width?: number; height?: number } = {}): Promise<Pane> {
    const { pane } = await live.server.newSession({ command: [...command], width: size.width ?? 60, height: size.height ?? 20, receipt: true });
    await screenShows(pane, ready);
    return pane;
  }

  it('cat: the line cat echoes back sits above the cursor and is not the input line', async () => {
    const pane = await start(['sh', '-c', 'echo cat-ready; exec cat'], 'cat-ready');
    const receipt = await paneDeliver(portOn(live.server), pane.id, TEXT);
    assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
    await screenShows(pane, `${TEXT}\n${TEXT}\n`);
  });

  it('cat run by a shell that waits for it (no exec): the shell leads the foreground group, cat reads the terminal', async () => {
    // tmux names the group's leader, sh, as the pane's foreground command; cat is in its group.
    const pane = await start(['sh', '-c', 'echo cat-ready; cat; true'], 'cat-ready');
    const receipt = await paneDeliver(portOn(live.server), pane.id, TEXT);
    assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
    await screenShows(pane, `${TEXT}\n${TEXT}\n`);
  });

  it('cat at the bottom of a full pane: Enter scrolls the screen', async () => {
    const pane = await start(['sh', '-c', 'seq 1 40; echo cat-ready; exec cat'], 'cat-ready', { height: 10 });
    const receipt = await paneDeliver(portOn(live.server), pane.id, TEXT);
    assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
    await screenShows(pane, `${TEXT}\n${TEXT}\n`);
  });

  for (const [what, length] of [
    ['its last three characters on a row of their own, the rest of its tail on the row above', 63],
    ['exactly two rows, the cursor left at the end of the second', 60],
  ] as const) {
    it(`cat: a line that wraps in a 30-column pane, ${what}`, async () => {
      const pane = await start(['sh', '-c', 'echo cat-ready; exec cat'], 'cat-ready', { width: 30 });
      const long = `${TEXT}-${'abcdefghij'.repeat(6)}`.slice(0, length);
      const receipt = await paneDeliver(portOn(live.server), pane.id, long);
      assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
      await eventually('cat to echo the line', async () => {
        const joined = (await pane.capture({ join: true })).toString('utf8');
        return joined.split('\n').filter((row) => row === long).length === 2;
      });
    });
  }

  it('python3 -i: the REPL answers and draws a new prompt', async () => {
    const pane = await start(['python3', '-i', '-q'], '>>>');
    const receipt = await paneDeliver(portOn(live.server), pane.id, TEXT);
    assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
    await screenShows(pane, "NameError: name 'hello' is not defined");
  });

  it('bc: the expression is evaluated', async () => {
    const pane = await start(['sh', '-c', 'echo bc-ready; exec bc -q'], 'bc-ready');
    const receipt = await paneDeliver(portOn(live.server), pane.id, TEXT);
    assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
    await screenShows(pane, `${TEXT}\n-42\n`);
  });

  it('sqlite3: an unfinished statement gets the continuation prompt', async () => {
    const pane = await start(['sqlite3', ':memory:'], 'sqlite>');
    const receipt = await paneDeliver(portOn(live.server), pane.id, TEXT);
    assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
    await screenShows(pane, '...>');
  });

  it('a program that ignores Enter is not submitted, and the text stays where it was typed', async () => {
    const pane = await start(stubbornEditor('ignore'), 'edit>');
    const receipt = await paneDeliver(portOn(live.server), pane.id, TEXT);
    assert.equal(receipt.status, 'failed', receipt.reason);
    assert.match(receipt.reason, /did not react to Enter/);
    assert.match(await screenOf(pane), new RegExp(`edit> ${TEXT}`));
  });

  it('a bare shell: refused, and with toShell given the line after ctrl+c drops what was half-typed there, an open quote included', async () => {
    const pane = await start(['env', 'PS1=shell> ', 'bash', '--norc', '--noprofile'], 'shell>');
    const refused = await paneDeliver(portOn(live.server), pane.id, 'echo refused-$((6*7))');
    assert.deepEqual([refused.status, refused.typed], ['failed', false]);
    assert.match(refused.reason, /the pane is shell, not ready/);
    // Someone left a command and an unfinished quote at the prompt: ctrl+u would clear the
    // line on screen but bash would still wait for the quote's end, which the text would close.
    await pane.sendText("echo 'left open");
    await pane.sendKeys(['Enter']);
    await pane.sendText('echo half-typed');
    await screenShows(pane, 'echo half-typed');
    const receipt = await paneDeliver(portOn(live.server), pane.id, 'echo delivered-$((6*7))', { toShell: true });
    assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
    await screenShows(pane, '\ndelivered-42\n');
    const screen = await screenOf(pane);
    assert.match(screen, /\nshell> echo delivered-\$\(\(6\*7\)\)\ndelivered-42\nshell>/, 'typed at a fresh prompt, alone');
    assert.doesNotMatch(screen, /^left open/m, 'the open quote was dropped, not closed by the text');
    assert.equal(screen.match(/^delivered-42$/gm)?.length, 1, 'run once');
  });

  it('a program that redraws on Enter but keeps the line is not submitted', async () => {
    const pane = await start(stubbornEditor('mark'), 'edit>');
    const receipt = await paneDeliver(portOn(live.server), pane.id, TEXT);
    assert.equal(receipt.status, 'staged_unconfirmed', receipt.reason);
    assert.match(receipt.reason, /still on the input line/);
    assert.match(await screenOf(pane), /\[enter seen\]/);
  });
});
