import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError, TimeoutError } from '../../src/process/index.js';
import {
  INPUT_RESERVATION_MS,
  INSUFFICIENT_BUDGET_MESSAGE,
  LOCK_WAIT_MS,
  PaneInputError,
  leadReservation,
  submitLine,
} from '../../src/fleet/index.js';
import { FakeClock, FakePort, notSentError } from './support.js';

function setup() {
  const clock = new FakeClock();
  const port = new FakePort(clock);
  const start = clock.now();
  return { clock, port, start };
}

describe('submission budgets', () => {
  it('reserves 3.5 s for input, leaving at most 1.5 s to wait for the lock', () => {
    assert.equal(INPUT_RESERVATION_MS, 3500);
    assert.equal(LOCK_WAIT_MS, 1500);
    assert.equal(leadReservation('escape'), 2500);
    assert.equal(leadReservation('direct'), 2000);
  });
});

describe('submitLine', () => {
  it('sends Escape, settles 0.5 s, types the line within what is left, settles 1 s, then Enter', async () => {
    const { clock, port, start } = setup();
    await submitLine({ input: port.input('%3'), line: 'hello', lead: 'escape', deadline: start + 5000, clock });
    assert.deepEqual(
      port.calls.map(({ op, pane, text, timeoutMs, at }) => ({ op, pane, text, timeoutMs, at: at - start })),
      [
        { op: 'escape', pane: '%3', text: undefined, timeoutMs: 1000, at: 0 },
        { op: 'literal', pane: '%3', text: 'hello', timeoutMs: 5000 - 510 - 2000, at: 510 },
        { op: 'enter', pane: '%3', text: undefined, timeoutMs: 5000 - 1520, at: 1520 },
      ],
    );
    assert.deepEqual(clock.sleeps, [500, 1000]);
  });

  it('types directly without Escape for the direct lead', async () => {
    const { clock, port, start } = setup();
    await submitLine({ input: port.input('%3'), line: '-n starts with a hyphen', lead: 'direct', deadline: start + 5000, clock });
    assert.deepEqual(port.calls.map((call) => [call.op, call.timeoutMs]), [
      ['literal', 3000],
      ['enter', 5000 - 1010],
    ]);
    assert.deepEqual(clock.sleeps, [1000]);
  });

  it('bounds Escape by the unreserved time when that is under one second', async () => {
    const { clock, port, start } = setup();
    await submitLine({ input: port.input('%3'), line: 'x', lead: 'escape', deadline: start + 3000, clock });
    assert.equal(port.calls[0]!.timeoutMs, 500);
    assert.equal(port.calls[1]!.timeoutMs, 3000 - 510 - 2000);
  });

  it('fails with the insufficient-budget error and starts no input when nothing remains beyond the reservation', async () => {
    for (const [lead, budget] of [['escape', 2500], ['direct', 2000]] as const) {
      const { clock, port, start } = setup();
      await assert.rejects(submitLine({ input: port.input('%3'), line: 'x', lead, deadline: start + budget, clock }), (error: unknown) => {
        assert.ok(error instanceof PaneInputError);
        assert.equal(error.message, INSUFFICIENT_BUDGET_MESSAGE);
        assert.equal(error.delivery, 'not_sent');
        assert.equal(error.dispatched, 'none');
        return true;
      });
      assert.equal(port.calls.length, 0);
    }
  });

  it('types no text when Escape consumed the slack', async () => {
    const { clock, port, start } = setup();
    port.costMs = 100;
    await assert.rejects(submitLine({ input: port.input('%3'), line: 'x', lead: 'escape', deadline: start + 2600, clock }), {
      message: INSUFFICIENT_BUDGET_MESSAGE,
      step: 'budget',
    });
    assert.deepEqual(port.calls.map((call) => call.op), ['escape']);
  });

  it('reports no dispatch for any Escape failure, even a timeout', async () => {
    const { clock, port, start } = setup();
    port.failOn('escape', new TimeoutError('send-keys did not finish', 1000));
    await assert.rejects(submitLine({ input: port.input('%3'), line: 'x', lead: 'escape', deadline: start + 5000, clock }), (error: unknown) => {
      assert.ok(error instanceof PaneInputError);
      assert.equal(error.step, 'escape');
      assert.equal(error.delivery, 'not_sent');
      assert.match(error.message, /no text was typed/);
      return true;
    });
    assert.deepEqual(port.calls.map((call) => call.op), ['escape']);
  });

  it('classifies a literal failure by whether the write provably did not start', async () => {
    const provable = setup();
    provable.port.failOn('literal', notSentError());
    await assert.rejects(submitLine({ ...provable, input: provable.port.input('%3'), line: 'x', lead: 'direct', deadline: provable.start + 5000 }), {
      step: 'literal',
      delivery: 'not_sent',
    });

    const ambiguous = setup();
    ambiguous.port.failOn('literal', new TimeoutError('send-keys did not finish', 3000));
    await assert.rejects(submitLine({ ...ambiguous, input: ambiguous.port.input('%3'), line: 'x', lead: 'direct', deadline: ambiguous.start + 5000 }), (error: unknown) => {
      assert.ok(error instanceof PaneInputError);
      assert.equal(error.delivery, 'possibly_sent');
      assert.equal(error.dispatched, 'uncertain');
      return true;
    });
    assert.deepEqual(ambiguous.port.calls.map((call) => call.op), ['literal'], 'no Enter after a failed literal');
  });

  it('treats any Enter failure as uncertain, since the line was typed', async () => {
    const { clock, port, start } = setup();
    port.failOn('enter', notSentError());
    await assert.rejects(submitLine({ input: port.input('%3'), line: 'x', lead: 'escape', deadline: start + 5000, clock }), {
      step: 'enter',
      delivery: 'possibly_sent',
    });
  });

  it('validates the line before sending anything', async () => {
    const { clock, port, start } = setup();
    await assert.rejects(submitLine({ input: port.input('%3'), line: 'two\nlines', lead: 'escape', deadline: start + 5000, clock }), ArgumentError);
    assert.equal(port.calls.length, 0);
  });
});
