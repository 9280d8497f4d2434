import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { CAPTURE_LINES, READY_PROBE, classifyReadiness, isShellCommand, probeReadiness } from '../../src/panes/index.js';
import { TRUST_DIALOG } from '../fixtures/fake-agent.js';
import { FakePane, recordingPacing } from './fake-pane.js';
import { fixture } from './fixtures.js';

const parked = fixture('trust-dialog.txt');
const withProbe = `│ > ${READY_PROBE} │`;

describe('classifyReadiness', () => {
  it('calls a shell foreground booting without evidence', () => {
    for (const shell of ['bash', 'zsh', '/bin/sh', '-bash', 'fish', 'nu']) {
      assert.deepEqual(classifyReadiness(shell), { state: 'booting', reason: 'shell_foreground' }, shell);
    }
  });

  it('needs evidence for any other foreground', () => {
    assert.throws(() => classifyReadiness('node'), ArgumentError);
  });

  it('is ready when the probe echoed', () => {
    assert.deepEqual(classifyReadiness('claude', { before: '│ > │', after: withProbe, settled: withProbe }), { state: 'ready', reason: 'probe_echoed' });
  });

  it('does not count a probe already on screen before typing as an echo', () => {
    const verdict = classifyReadiness('claude', { before: withProbe, after: withProbe, settled: withProbe });
    assert.deepEqual(verdict, { state: 'parked', reason: 'input_held' });
  });

  it('is booting on a blank screen, even a stable one', () => {
    assert.deepEqual(classifyReadiness('node', { before: '', after: '\n\n', settled: '\n\n' }), { state: 'booting', reason: 'blank_screen' });
  });

  it('is booting while the screen changes', () => {
    assert.deepEqual(classifyReadiness('node', { before: 'Loading 1', after: 'Loading 2', settled: 'Loading 3' }), {
      state: 'booting',
      reason: 'screen_changing',
    });
  });

  it('is parked on a stable drawn screen that swallowed the probe', () => {
    assert.deepEqual(classifyReadiness('node', { before: parked, after: parked, settled: parked }), { state: 'parked', reason: 'input_held' });
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
    const report = await probeReadiness(pane, { pacing });
    assert.deepEqual(report, { state: 'ready', reason: 'probe_echoed', snippet: '' });
    assert.deepEqual(pane.sends(), [`literal ${READY_PROBE}`, 'keys C-u']);
    assert.equal(pane.model.input, '', 'the probe is cleared');
    assert.deepEqual(pacing.waits, [300], 'one settle; no stability wait after an echo');
    assert.ok(pane.calls.every((call) => !call.startsWith('capture') || call === `capture ${CAPTURE_LINES}`));
  });

  it('reads a shell pane without typing into it', async () => {
    const pane = new FakePane();
    pane.behaviour = 'shell';
    const report = await probeReadiness(pane, { pacing: recordingPacing() });
    assert.equal(report.state, 'booting');
    assert.equal(report.reason, 'shell_foreground');
    assert.equal(report.snippet, '$ \n');
    assert.deepEqual(pane.sends(), []);
  });

  it('reports a dialog as parked with the screen as snippet, both captures before the clear', async () => {
    const pane = new FakePane();
    pane.behaviour = 'parked';
    const pacing = recordingPacing();
    const report = await probeReadiness(pane, { pacing });
    assert.equal(report.state, 'parked');
    assert.equal(report.snippet, `${TRUST_DIALOG.join('\n')}\n`);
    assert.deepEqual(pacing.waits, [300, 500]);
    const clear = pane.calls.indexOf('keys C-u');
    assert.equal(pane.calls.slice(clear).filter((call) => call.startsWith('capture')).length, 0, 'no capture after C-u');
    assert.equal(pane.calls.filter((call) => call.startsWith('capture')).length, 3);
  });

  it('reports a screen that keeps changing as booting', async () => {
    const pane = new FakePane();
    pane.behaviour = 'booting';
    const report = await probeReadiness(pane, { pacing: recordingPacing() });
    assert.equal(report.state, 'booting');
    assert.equal(report.reason, 'screen_changing');
    assert.match(report.snippet, /^Starting… \d+\n$/);
  });

  it('reports a blank screen as booting with an empty snippet', async () => {
    const pane = new FakePane();
    pane.behaviour = 'blank';
    assert.deepEqual(await probeReadiness(pane, { pacing: recordingPacing() }), { state: 'booting', reason: 'blank_screen', snippet: '' });
  });

  it('leaves copy-mode before typing, so the probe reaches the agent', async () => {
    const pane = new FakePane();
    pane.inCopyMode = true;
    const report = await probeReadiness(pane, { pacing: recordingPacing() });
    assert.equal(report.state, 'ready');
    assert.deepEqual(pane.sends(), ['cancel-mode', `literal ${READY_PROBE}`, 'keys C-u']);
  });

  it('checks the mode before every send', async () => {
    const pane = new FakePane();
    await probeReadiness(pane, { pacing: recordingPacing() });
    const sends = pane.calls.flatMap((call, index) => (call.startsWith('literal') || call.startsWith('keys') ? [index] : []));
    assert.ok(sends.every((index) => pane.calls[index - 1] === 'in-mode'));
  });

  it('still clears the probe when a capture fails after typing, and passes the failure on', async () => {
    const pane = new FakePane();
    const failure = new Error('pane went away');
    pane.calls.length = 0;
    const pacing = recordingPacing();
    pacing.sleep = async () => {
      pane.captureFailure = failure;
    };
    await assert.rejects(probeReadiness(pane, { pacing }), (error) => error === failure);
    assert.equal(pane.sends().at(-1), 'keys C-u');
    assert.equal(pane.model.input, '');
  });

  it('stops waiting when aborted', async () => {
    const pane = new FakePane();
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(probeReadiness(pane, { signal: controller.signal }), { name: 'AbortedError' });
    assert.equal(pane.sends().at(-1), 'keys C-u');
  });
});
