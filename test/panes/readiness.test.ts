import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isShellCommand } from '../../src/agents/index.js';
import { CAPTURE_LINES, READY_PROBE, classifyProbe, isKeyDrivenProgram, probeReadiness, readinessOfReading } from '../../src/panes/index.js';
import { TRUST_DIALOG } from '../fixtures/fake-agent.js';
import { FakePane, recordingPacing } from './fake-pane.js';
import { fixture } from './fixtures.js';

const parked = fixture('trust-dialog.txt');
const withProbe = `│ > ${READY_PROBE} │`;

describe('classifyProbe', () => {
  it('is ready when the probe echoed', () => {
    assert.deepEqual(classifyProbe({ before: '│ > │', after: withProbe, settled: withProbe }), { state: 'ready', reason: 'probe_echoed' });
  });

  it('does not count a probe already on screen before typing as an echo', () => {
    const verdict = classifyProbe({ before: withProbe, after: withProbe, settled: withProbe });
    assert.deepEqual(verdict, { state: 'parked', reason: 'input_held' });
  });

  it('is booting on a blank screen, even a stable one', () => {
    assert.deepEqual(classifyProbe({ before: '', after: '\n\n', settled: '\n\n' }), { state: 'booting', reason: 'blank_screen' });
  });

  it('is booting while the screen changes', () => {
    assert.deepEqual(classifyProbe({ before: 'Loading 1', after: 'Loading 2', settled: 'Loading 3' }), {
      state: 'booting',
      reason: 'screen_changing',
    });
  });

  it('is parked on a stable drawn screen that swallowed the probe', () => {
    assert.deepEqual(classifyProbe({ before: parked, after: parked, settled: parked }), { state: 'parked', reason: 'input_held' });
  });
});

describe('readinessOfReading', () => {
  it('maps each phase of a known agent to a readiness state', () => {
    const reading = (phase: 'composer' | 'busy' | 'dialog' | 'permission' | 'exited' | 'unknown') => readinessOfReading({ phase, rule: 'x', detail: '', composer: null, completion: false, question: null });
    assert.deepEqual(reading('composer'), { state: 'ready', reason: 'agent_composer' });
    assert.deepEqual(reading('busy'), { state: 'busy', reason: 'agent_busy' });
    assert.deepEqual(reading('dialog'), { state: 'parked', reason: 'agent_dialog' });
    assert.deepEqual(reading('permission'), { state: 'parked', reason: 'agent_permission' });
    assert.deepEqual(reading('exited'), { state: 'exited', reason: 'agent_exited' });
    assert.deepEqual(reading('unknown'), { state: 'booting', reason: 'agent_unrecognised' });
  });
});

describe('isShellCommand', () => {
  it('knows the nine shells and nothing else', () => {
    assert.ok(['sh', 'bash', 'zsh', 'fish', 'dash', 'ksh', 'tcsh', 'csh', 'nu'].every(isShellCommand));
    assert.ok(!['node', 'claude', 'bashful', '', 'python3'].some(isShellCommand));
  });
});

describe('probeReadiness', () => {
  it('types the probe, sees it echo, clears it and reports ready', async () => {
    const pane = new FakePane();
    const pacing = recordingPacing();
    const report = await probeReadiness(pane.driven(), { pacing });
    assert.deepEqual(report, { state: 'ready', reason: 'probe_echoed', agent: null, rule: null, detail: 'the probe text echoed', draft: null, snippet: '' });
    assert.deepEqual(pane.sends(), [`type ${READY_PROBE}`, 'keys ctrl+u']);
    assert.equal(pane.model.input, '', 'the probe is cleared');
    assert.deepEqual(pacing.waits, [], 'the echo and the clear are each seen at the first look: nothing is waited out, no stability wait after an echo');
    assert.ok(pane.calls.every((call) => !call.startsWith('grid') || call === `grid recent ${CAPTURE_LINES}`));
  });

  it('erases the probe key by key when ctrl+u does not clear it, so no text is left behind', async () => {
    const pane = new FakePane();
    // A program whose input line has no ctrl+u binding: only Backspace erases.
    pane.keys = async (keys) => {
      pane.calls.push(`keys ${keys.join(' ')}`);
      if (keys.every((key) => key === 'Backspace')) pane.model.input = pane.model.input.slice(0, -keys.length);
    };
    const report = await probeReadiness(pane.driven(), { pacing: recordingPacing() });
    assert.equal(report.state, 'ready');
    assert.equal(pane.model.input, '');
    assert.ok(pane.sends().some((send) => send === `keys ${Array(READY_PROBE.length).fill('Backspace').join(' ')}`));
  });

  it('reports a dead pane as exited and types nothing', async () => {
    const pane = new FakePane();
    pane.dead = true;
    const report = await probeReadiness(pane.driven(), { pacing: recordingPacing() });
    assert.deepEqual([report.state, report.reason], ['exited', 'pane_dead']);
    assert.deepEqual(pane.sends(), []);
  });

  it('reads a shell pane without typing into it', async () => {
    const pane = new FakePane();
    pane.behaviour = 'shell';
    const report = await probeReadiness(pane.driven(), { pacing: recordingPacing() });
    assert.equal(report.state, 'shell');
    assert.equal(report.reason, 'shell_foreground');
    assert.equal(report.snippet, '$ \n');
    assert.deepEqual(pane.sends(), []);
  });

  it('parks an editor, pager or full-screen tool without typing: it would take the probe as commands', async () => {
    for (const foreground of ['vim', '/usr/bin/less', 'htop']) {
      const pane = new FakePane();
      pane.foreground = foreground;
      const report = await probeReadiness(pane.driven(), { pacing: recordingPacing() });
      assert.deepEqual([report.state, report.reason], ['parked', 'key_driven_foreground'], foreground);
      assert.match(report.detail, /takes typed keys as commands; nothing was typed/);
      assert.deepEqual(pane.sends(), [], `${foreground} was sent nothing`);
    }
    assert.equal(isKeyDrivenProgram('vimx'), false, 'names are whole');
  });

  it('reports a foreground that reads nothing as busy without typing: the terminal would echo the probe all the same', async () => {
    const pane = new FakePane();
    pane.foreground = 'sleep';
    pane.foregroundWaits = ['clock_nanosleep', 'wait4'];
    const report = await probeReadiness(pane.driven(), { pacing: recordingPacing() });
    assert.deepEqual([report.state, report.reason], ['busy', 'foreground_waiting']);
    assert.equal(report.detail, 'sleep owns the pane and reads nothing: it waits in clock_nanosleep and wait4; typed text would wait until it ends, nothing was typed');
    assert.deepEqual(pane.sends(), []);
  });

  it('reports a dialog as parked with the screen as snippet, both reads before the clear', async () => {
    const pane = new FakePane();
    pane.behaviour = 'parked';
    const pacing = recordingPacing();
    const report = await probeReadiness(pane.driven(), { pacing });
    assert.equal(report.state, 'parked');
    assert.equal(report.snippet, `${TRUST_DIALOG.join('\n')}\n`);
    // No echo: the whole settle is watched (a look at once, then 20 more 15 ms apart), then the
    // stability wait; the probe never showed, so the first look after ctrl+u finds it gone.
    assert.deepEqual(pacing.waits, [...Array<number>(20).fill(15), 500]);
    const clear = pane.calls.indexOf('keys ctrl+u');
    assert.equal(pane.calls.slice(clear).filter((call) => call.startsWith('grid')).length, 1, 'after ctrl+u only the check that the probe is gone');
    assert.equal(pane.calls.filter((call) => call.startsWith('grid')).length, 1 + 21 + 1 + 1);
  });

  it('reports a screen that keeps changing as booting', async () => {
    const pane = new FakePane();
    pane.behaviour = 'booting';
    const report = await probeReadiness(pane.driven(), { pacing: recordingPacing() });
    assert.equal(report.state, 'booting');
    assert.equal(report.reason, 'screen_changing');
    assert.match(report.snippet, /^Starting… \d+\n$/);
  });

  it('reports a blank screen as booting with an empty snippet', async () => {
    const pane = new FakePane();
    pane.behaviour = 'blank';
    const report = await probeReadiness(pane.driven(), { pacing: recordingPacing() });
    assert.deepEqual([report.state, report.reason, report.snippet], ['booting', 'blank_screen', '']);
  });

  it('still clears the probe when a read fails after typing, and passes the failure on', async () => {
    const pane = new FakePane();
    const failure = new Error('pane went away');
    pane.calls.length = 0;
    const type = pane.type.bind(pane);
    pane.type = async (text) => {
      await type(text);
      pane.gridFailure = failure;
    };
    await assert.rejects(probeReadiness(pane.driven(), { pacing: recordingPacing() }), (error) => error === failure);
    assert.equal(pane.sends().at(-1), 'keys ctrl+u');
    assert.equal(pane.model.input, '');
  });

  it('stops waiting when aborted', async () => {
    const pane = new FakePane();
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(probeReadiness(pane.driven(), { signal: controller.signal }), { name: 'AbortedError' });
    assert.equal(pane.sends().at(-1), 'keys ctrl+u');
  });
});
