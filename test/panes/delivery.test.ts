import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { MULTI_LINE_NEEDS_PASTE, READY_PROBE, checkDeliverableText, deliverText, pointerPrompt } from '../../src/panes/index.js';
import { FakePane, recordingPacing } from './fake-pane.js';

const prompt = 'Read /tmp/prompts/a-long-prompt-file-name-for-wrapping.md and execute it.';

describe('deliverText to a program drover has no screen rules for', () => {
  it('probes, types the text, presses Enter and sees it leave the input line', async () => {
    const pane = new FakePane();
    const pacing = recordingPacing();
    const warnings: string[] = [];
    const receipt = await deliverText(pane.driven(), prompt, { pacing, onWarning: (message) => warnings.push(message) });
    assert.equal(receipt.status, 'submitted');
    assert.equal(receipt.evidence, 'composer_cleared');
    assert.equal(receipt.method, 'keys');
    assert.equal(receipt.attempts, 1);
    assert.equal(receipt.snippet, '');
    assert.deepEqual(warnings, []);
    assert.deepEqual(pane.sends(), [`type ${READY_PROBE}`, 'keys ctrl+u', 'keys ctrl+u', `type ${prompt}`, 'keys Enter']);
    assert.deepEqual(pane.model.transcript, [`> ${prompt}`, '● Done.']);
    // Each send is seen at the first read after it: probe echo, probe cleared, text echo, Enter taken.
    assert.deepEqual(pacing.waits, [], 'nothing is waited out on a program that shows each send at once');
  });

  it('verifies a prompt far longer than the pane is wide', async () => {
    const pane = new FakePane();
    pane.columns = 12;
    const long = `${prompt} ${prompt}`;
    assert.equal((await deliverText(pane.driven(), long, { pacing: recordingPacing() })).status, 'submitted');
    assert.equal(pane.model.transcript[0], `> ${long}`);
  });

  it('retries once when the typed text did not echo, and warns even though the retry succeeds', async () => {
    const pane = new FakePane();
    const warnings: string[] = [];
    // The probe lands, the first typing of the prompt is lost.
    const realType = pane.type.bind(pane);
    let prompts = 0;
    pane.type = async (text) => {
      if (text === prompt && prompts++ === 0) pane.loseTyping = 1;
      return realType(text);
    };
    const receipt = await deliverText(pane.driven(), prompt, { pacing: recordingPacing(), onWarning: (message) => warnings.push(message) });
    assert.equal(receipt.status, 'submitted');
    assert.equal(receipt.attempts, 2);
    assert.deepEqual(warnings, ['delivery attempt 1 failed (the text did not echo in the pane); retrying']);
    assert.deepEqual(pane.model.transcript, [`> ${prompt}`, '● Done.']);
  });

  it('fails, without a second Enter, when Enter leaves the screen as it was; the screen is the snippet', async () => {
    const pane = new FakePane();
    pane.ignoreEnter = true;
    const receipt = await deliverText(pane.driven(), prompt, { pacing: recordingPacing() });
    assert.equal(receipt.status, 'failed');
    assert.match(receipt.reason, /did not react to Enter/);
    assert.equal(receipt.typed, true);
    assert.match(receipt.snippet, /│ > Read \/tmp\/prompt/);
    assert.ok(receipt.snippet.split('\n').length - 1 <= 20);
    assert.equal(pane.sends().filter((send) => send === 'keys Enter').length, 1, 'a prompt that may have been taken is never entered twice');
  });

  it('never types the text into a parked pane and says nothing was typed', async () => {
    const pane = new FakePane();
    pane.behaviour = 'parked';
    const receipt = await deliverText(pane.driven(), prompt, { pacing: recordingPacing() });
    assert.equal(receipt.status, 'failed');
    assert.match(receipt.reason, /the pane is parked, not ready/);
    assert.equal(receipt.typed, false);
    assert.match(receipt.snippet, /Do you trust the files/);
    assert.ok(!pane.sends().includes(`type ${prompt}`));
  });

  it('does not retry a multiplexer failure', async () => {
    const pane = new FakePane();
    const gone = new Error('tmux has no pane %9');
    pane.grid = async () => {
      throw gone;
    };
    await assert.rejects(deliverText(pane.driven(), prompt, { pacing: recordingPacing() }), (error) => error === gone);
    assert.deepEqual(pane.sends(), []);
  });

  it('refuses text it could not deliver safely before typing anything', async () => {
    const pane = new FakePane();
    await assert.rejects(deliverText(pane.driven(), '   '), ArgumentError);
    await assert.rejects(deliverText(pane.driven(), 'bad\x1b[201~escape'), ArgumentError);
    assert.deepEqual(pane.calls, []);
    await assert.rejects(deliverText(pane.driven(), 'two\nlines'), /multi-line text can only be delivered to an agent drover knows/);
    assert.deepEqual(pane.sends(), [], 'a line break could act as Enter in an unknown program');
    await assert.rejects(deliverText(pane.driven(), 'pr\t(5)'), /a tab can only be delivered to an agent drover knows .* the Tab key, which a line editor takes for completion/);
    await assert.rejects(deliverText(pane.driven(), 'z'.repeat(4096)), /the line is 4096 bytes; typed into node, a terminal reading whole lines keeps only the first 4095/);
    await assert.rejects(deliverText(pane.driven(), 'é'.repeat(2048)), /the line is 4096 bytes/, 'bytes, not characters');
    assert.deepEqual(pane.sends(), [], 'nothing typed for a tab or an overlong line');
  });

  it('refuses several lines where the multiplexer cannot paste, before reading or typing anything', async () => {
    const pane = new FakePane();
    pane.pastes = false;
    pane.agent = { name: 'claude', kind: 'claude', pid: null };
    await assert.rejects(deliverText(pane.driven(), 'two\nlines'), (error) => error instanceof ArgumentError && error.message === MULTI_LINE_NEEDS_PASTE);
    assert.deepEqual(pane.calls, []);
  });
});

describe('checkDeliverableText', () => {
  it('names the control character and where it is', () => {
    assert.throws(() => checkDeliverableText('ok\x1bthen'), /\\x1b at offset 2/);
    assert.throws(() => checkDeliverableText('bell\x07'), /\\x07 at offset 4/);
    assert.throws(() => checkDeliverableText('lone\rreturn'), /\\x0d at offset 4/);
    assert.doesNotThrow(() => checkDeliverableText('ünïcode ✓ — fine'));
  });

  it('keeps line breaks and tabs, reads CRLF as LF, and bounds the size', () => {
    assert.equal(checkDeliverableText('a\r\nb\tc\n'), 'a\nb\tc\n');
    assert.throws(() => checkDeliverableText('x'.repeat(1_000_001)), /drover delivers at most 1000000/);
  });
});

describe('pointerPrompt', () => {
  it('is the line a prompt file is delivered as', () => {
    assert.equal(pointerPrompt('prompts/next.md'), 'Read prompts/next.md and execute it.');
  });
});
