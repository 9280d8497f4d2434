import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError, TimeoutError } from '../../src/process/index.js';
import {
  INPUT_RESERVATION_MS,
  ESCAPE_SETTLE_MS,
  INSUFFICIENT_BUDGET_MESSAGE,
  LOCK_WAIT_MS,
  SUBMIT_SETTLE_MS,
  PaneInputError,
  leadReservation,
  lineLeftOnScreen,
  resumeLine,
  submitLine,
} from '../../src/fleet/index.js';
import { WATCH_INTERVAL_MS } from '../../src/panes/index.js';
import { FakeClock, FakePort, notSentError } from './support.js';

function setup() {
  const clock = new FakeClock();
  const port = new FakePort(clock);
  const start = clock.now();
  return { clock, port, start };
}

/** A pane running `cat -v`: Escape shows as ^[ and typed text on the input line, the cursor after it; Enter moves to a new line. */
function echoingPane(port: FakePort): void {
  const lines = [''];
  port.onCall = (call) => {
    if (call.op === 'escape') lines[lines.length - 1] += '^[';
    if (call.op === 'literal') lines[lines.length - 1] += call.text!;
    if (call.op === 'enter') lines.push('');
  };
  port.readScreen = () => Promise.resolve({ lines: [...lines], width: 80, height: 24, cursor: { x: lines.at(-1)!.length, y: lines.length - 1, visible: true } } as never);
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
  it('ends each settle on the evidence the pane shows: Escape echoed, then the typed line seen, then Enter', async () => {
    const { clock, port, start } = setup();
    echoingPane(port);
    await submitLine({ input: port.input('%3'), line: 'hello', lead: 'escape', deadline: start + 5000, clock });
    assert.deepEqual(
      port.calls.map(({ op, text, at }) => ({ op, text, at: at - start })),
      [
        { op: 'read', text: undefined, at: 0 },
        { op: 'escape', text: undefined, at: 10 },
        { op: 'read', text: undefined, at: 20 },
        { op: 'literal', text: 'hello', at: 30 },
        { op: 'read', text: undefined, at: 40 },
        { op: 'enter', text: undefined, at: 50 },
      ],
    );
    assert.deepEqual(clock.sleeps, []);
  });

  it('waits out each settle as its bound when the pane never shows the evidence: 0.5 s after Escape, 1 s before Enter', async () => {
    const { clock, port, start } = setup();
    await submitLine({ input: port.input('%3'), line: 'hello', lead: 'escape', deadline: start + 5000, clock });
    const [escape, literal, enter] = port.inputs;
    assert.deepEqual([escape!.op, literal!.op, enter!.op], ['escape', 'literal', 'enter']);
    // The bound, and less than one more read past it.
    assert.ok(literal!.at - (escape!.at + 10) >= ESCAPE_SETTLE_MS && literal!.at - escape!.at < ESCAPE_SETTLE_MS + WATCH_INTERVAL_MS + 20, `literal ${literal!.at - escape!.at} ms after Escape`);
    assert.ok(enter!.at - (literal!.at + 10) >= SUBMIT_SETTLE_MS && enter!.at - literal!.at < SUBMIT_SETTLE_MS + WATCH_INTERVAL_MS + 20, `Enter ${enter!.at - literal!.at} ms after the line`);
    assert.ok(clock.sleeps.every((ms) => ms <= WATCH_INTERVAL_MS), 'the pane is read again while the settle waits');
  });

  it('takes an unreadable pane as no evidence and waits out the bound', async () => {
    const { clock, port, start } = setup();
    port.failOn('read', notSentError(), 2);
    await submitLine({ input: port.input('%3'), line: 'hello', lead: 'direct', deadline: start + 5000, clock });
    const [literal, enter] = port.inputs;
    assert.equal(enter!.at - (literal!.at + 10), SUBMIT_SETTLE_MS);
  });

  it('types directly without Escape for the direct lead', async () => {
    const { clock, port, start } = setup();
    echoingPane(port);
    await submitLine({ input: port.input('%3'), line: '-n starts with a hyphen', lead: 'direct', deadline: start + 5000, clock });
    assert.deepEqual(port.inputs.map((call) => [call.op, call.timeoutMs]), [
      ['literal', 3000],
      ['enter', 5000 - 20],
    ]);
  });

  it('bounds Escape by the unreserved time when that is under one second', async () => {
    const { clock, port, start } = setup();
    echoingPane(port);
    await submitLine({ input: port.input('%3'), line: 'x', lead: 'escape', deadline: start + 3000, clock });
    assert.deepEqual(port.calls.slice(0, 2).map((call) => [call.op, call.timeoutMs]), [
      ['read', 500],
      ['escape', 490],
    ]);
    assert.equal(port.inputs[1]!.timeoutMs, 3000 - 30 - 2000, 'the line keeps the settle and Enter reserved');
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

  it('types no text when Escape and its settle consumed the slack', async () => {
    const { clock, port, start } = setup();
    port.costMs = 50;
    await assert.rejects(submitLine({ input: port.input('%3'), line: 'x', lead: 'escape', deadline: start + 2600, clock }), {
      message: INSUFFICIENT_BUDGET_MESSAGE,
      step: 'budget',
    });
    assert.deepEqual(port.inputs.map((call) => call.op), ['escape']);
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
    assert.deepEqual(port.inputs.map((call) => call.op), ['escape']);
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

describe('resuming a line a dead dispatcher left', () => {
  const line = '[drover msg 7 from 1 2026-10-24T09:00:00.000000+00:00] hello';
  const screen = (cursor: { x: number; y: number }, ...lines: string[]) => ({ paneId: '%3', rows: [], lines, width: 20, height: lines.length, cursor: { ...cursor, visible: true } });

  it('reads a line typed but not entered, one the pane moved past, and one it never showed', () => {
    const wrapped = [line.slice(0, 20), line.slice(20, 40), line.slice(40)];
    assert.equal(lineLeftOnScreen(screen({ x: line.length - 40, y: 2 }, ...wrapped), line), 'typed');
    assert.equal(lineLeftOnScreen(screen({ x: 0, y: 3 }, ...wrapped, ''), line), 'submitted');
    assert.equal(lineLeftOnScreen(screen({ x: 0, y: 1 }, 'other', ''), line), null);
    assert.equal(lineLeftOnScreen(screen({ x: 3, y: 2 }, ...wrapped.slice(0, 2), 'abc'), line), null, 'a part of the line is not the line');
    assert.equal(lineLeftOnScreen({ ...screen({ x: 0, y: 0 }, line), cursor: null }, line), null, 'without a cursor nothing is read');
  });

  it('presses Enter alone for a typed line, nothing for a submitted one, and leaves an absent one to be typed', async () => {
    const fresh = setup();
    echoingPane(fresh.port);
    assert.equal(await resumeLine({ input: fresh.port.input('%3'), line, deadline: fresh.start + 5000 }), 'absent');
    assert.deepEqual(fresh.port.inputs, [], 'nothing typed when the line shows nowhere');

    const halfway = setup();
    echoingPane(halfway.port);
    await halfway.port.input('%3').channel(halfway.start + 5000).type(line);
    assert.equal(await resumeLine({ input: halfway.port.input('%3'), line, deadline: halfway.start + 5000 }), 'entered');
    assert.deepEqual(halfway.port.inputs.map((call) => call.op), ['literal', 'enter'], 'Enter alone after the line the dead dispatcher typed');

    const done = setup();
    echoingPane(done.port);
    await submitLine({ input: done.port.input('%3'), line, lead: 'direct', deadline: done.start + 5000, clock: done.clock });
    const before = done.port.inputs.length;
    assert.equal(await resumeLine({ input: done.port.input('%3'), line, deadline: done.start + 5000 }), 'submitted');
    assert.equal(done.port.inputs.length, before, 'nothing sent for a line the pane moved past');
  });

  it('finds a submitted line that scrolled off the screen in the scrollback, and only one that did', async () => {
    const scrolled = setup();
    echoingPane(scrolled.port);
    scrolled.port.scrollback = ['older output', line, 'more output'];
    assert.equal(await resumeLine({ input: scrolled.port.input('%3'), line, deadline: scrolled.start + 5000 }), 'submitted');
    assert.deepEqual(scrolled.port.inputs, [], 'nothing sent for a line the pane took long ago');

    const typedOnly = setup();
    echoingPane(typedOnly.port);
    await typedOnly.port.input('%3').channel(typedOnly.start + 5000).type(`${line} and more`);
    assert.equal(await resumeLine({ input: typedOnly.port.input('%3'), line, deadline: typedOnly.start + 5000 }), 'absent', 'a copy on the screen is not one in the scrollback');
  });

  it('types nothing when the screen cannot be read, and says the message stays pending', async () => {
    const { port, start } = setup();
    echoingPane(port);
    await port.input('%3').channel(start + 5000).type(line);
    const typed = port.inputs.length;
    port.failOn('read', notSentError());
    await assert.rejects(resumeLine({ input: port.input('%3'), line, deadline: start + 5000 }), (error: unknown) => {
      assert.ok(error instanceof PaneInputError, String(error));
      assert.equal(error.delivery, 'not_sent');
      assert.match(error.message, /could not be read to see whether an earlier delivery of this message left its line there, so nothing was typed; it stays pending/);
      return true;
    });
    assert.equal(port.inputs.length, typed, 'no Enter and no second copy of the line');
  });
});
