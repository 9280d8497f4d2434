import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { DeliveryError, READY_PROBE, checkDeliverableText, deliverText, pointerPrompt } from '../../src/panes/index.js';
import { FakePane, recordingPacing } from './fake-pane.js';

const prompt = 'Read /tmp/prompts/a-long-prompt-file-name-for-wrapping.md and execute it.';

describe('deliverText', () => {
  it('runs the verified choreography once and submits the text', async () => {
    const pane = new FakePane();
    const pacing = recordingPacing();
    const warnings: string[] = [];
    const result = await deliverText(pane, prompt, { pacing, onWarning: (message) => warnings.push(message) });
    assert.deepEqual(result, { attempts: 1 });
    assert.deepEqual(warnings, []);
    assert.deepEqual(pane.sends(), [`literal ${READY_PROBE}`, 'keys C-u', 'keys C-u', `literal ${prompt}`, 'keys Enter']);
    assert.deepEqual(pane.model.transcript, [`> ${prompt}`, '● Done.']);
    // probe settle, C-u settle, typing settle, busy wait
    assert.deepEqual(pacing.waits, [300, 300, 300, 800]);
  });

  it('verifies a prompt far longer than the pane is wide', async () => {
    const pane = new FakePane();
    pane.columns = 12;
    const long = `${prompt} ${prompt}`;
    assert.deepEqual(await deliverText(pane, long, { pacing: recordingPacing() }), { attempts: 1 });
    assert.equal(pane.model.transcript[0], `> ${long}`);
  });

  it('takes a pane out of copy-mode before typing', async () => {
    const pane = new FakePane();
    pane.inCopyMode = true;
    await deliverText(pane, prompt, { pacing: recordingPacing() });
    assert.equal(pane.sends()[0], 'cancel-mode');
    assert.equal(pane.model.transcript[0], `> ${prompt}`);
  });

  it('retries once when the typed text did not echo, and warns even though the retry succeeds', async () => {
    const pane = new FakePane();
    const warnings: string[] = [];
    // The probe lands, the first typing of the prompt is lost.
    const realSend = pane.sendLiteral.bind(pane);
    let prompts = 0;
    pane.sendLiteral = async (text) => {
      if (text === prompt && prompts++ === 0) pane.loseLiterals = 1;
      return realSend(text);
    };
    const result = await deliverText(pane, prompt, { pacing: recordingPacing(), onWarning: (message) => warnings.push(message) });
    assert.deepEqual(result, { attempts: 2 });
    assert.deepEqual(warnings, ['delivery attempt 1 failed (the text did not echo in the pane); retrying']);
    assert.deepEqual(pane.model.transcript, [`> ${prompt}`, '● Done.']);
  });

  it('gives up after the retry when Enter never advances the screen, with the last screen as snippet', async () => {
    const pane = new FakePane();
    pane.ignoreEnter = true;
    const warnings: string[] = [];
    await assert.rejects(deliverText(pane, prompt, { pacing: recordingPacing(), onWarning: (message) => warnings.push(message) }), (error) => {
      assert.ok(error instanceof DeliveryError);
      assert.match(error.message, /after 2 attempts: the pane did not react to Enter/);
      assert.equal(error.attempts, 2);
      assert.equal(error.delivery, 'possibly_sent');
      assert.equal(error.phase, 'verify');
      assert.match(error.snippet, /│ > Read \/tmp\/prompt/);
      assert.ok(error.snippet.split('\n').length - 1 <= 20);
      return true;
    });
    assert.equal(warnings.length, 1);
    assert.equal(pane.sends().filter((send) => send === 'keys Enter').length, 2);
  });

  it('never types the text into a parked pane and says nothing was sent', async () => {
    const pane = new FakePane();
    pane.behaviour = 'parked';
    await assert.rejects(deliverText(pane, prompt, { pacing: recordingPacing() }), (error) => {
      assert.ok(error instanceof DeliveryError);
      assert.match(error.message, /the pane is parked, not ready/);
      assert.equal(error.delivery, 'not_sent');
      assert.match(error.snippet, /Do you trust the files/);
      return true;
    });
    assert.ok(!pane.sends().includes(`literal ${prompt}`));
  });

  it('does not retry a tmux failure', async () => {
    const pane = new FakePane();
    const gone = new Error("can't find pane: %9");
    pane.foregroundCommand = async () => {
      throw gone;
    };
    await assert.rejects(deliverText(pane, prompt, { pacing: recordingPacing() }), (error) => error === gone);
  });

  it('refuses text it could not verify before typing anything', async () => {
    const pane = new FakePane();
    await assert.rejects(deliverText(pane, 'two\nlines'), ArgumentError);
    await assert.rejects(deliverText(pane, '   '), ArgumentError);
    assert.deepEqual(pane.calls, []);
  });
});

describe('checkDeliverableText', () => {
  it('names the control character and where it is', () => {
    assert.throws(() => checkDeliverableText('ok\x1bthen'), /\\x1b at offset 2/);
    assert.throws(() => checkDeliverableText('tab\there'), /\\x09 at offset 3/);
    assert.doesNotThrow(() => checkDeliverableText('ünïcode ✓ — fine'));
  });
});

describe('pointerPrompt', () => {
  it('is the line a prompt file is delivered as', () => {
    assert.equal(pointerPrompt('prompts/next.md'), 'Read prompts/next.md and execute it.');
  });
});
