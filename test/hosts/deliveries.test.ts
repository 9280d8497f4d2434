import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DeliveryLedger, RPC_DELIVERY_IDS_SINCE, RPC_VERSION, deliveryIdProblem, expiredDeliveries, judgeKnownDelivery, newDeliveryId, versionAtLeast, type DeliveryRecord } from '../../src/hosts/index.js';
import { ArgumentError, run } from '../../src/process/index.js';

const started: DeliveryRecord = { delivery_id: 'd1', state: 'started', pane: '%1', pid: 4242, started_at: '2026-01-01T00:00:00.000000Z' };

describe('delivery ids: the pure rules', () => {
  it('takes ids that name a file and read as a word, and refuses the rest', () => {
    assert.equal(deliveryIdProblem('dlv-abc_1.2'), undefined);
    assert.equal(deliveryIdProblem(newDeliveryId()), undefined, 'a generated id is an id');
    assert.notEqual(newDeliveryId(), newDeliveryId());
    for (const bad of ['', '../x', '-x', 'a b', 'a/b', '.hidden', 'x'.repeat(129)]) assert.match(deliveryIdProblem(bad) ?? '', /is not a delivery id/, bad);
  });

  it('replays an ended delivery, waits on one whose process runs, and calls any other possibly sent', () => {
    const ended: DeliveryRecord = { ...started, state: 'ended', exit_status: 0, document: { status: 'submitted' } };
    assert.equal(judgeKnownDelivery(ended, () => false).kind, 'replay');
    assert.equal(judgeKnownDelivery(started, (pid) => pid === 4242).kind, 'in_flight');
    assert.equal(judgeKnownDelivery(started, () => false).kind, 'cut_off');
    assert.equal(judgeKnownDelivery({ ...started, state: 'interrupted', problem: 'tmux failed' }, () => true).kind, 'cut_off');
  });

  it('sends a delivery only to a host whose drover-rpc remembers its id', () => {
    assert.equal(versionAtLeast(RPC_VERSION, RPC_DELIVERY_IDS_SINCE), true, 'this drover does');
    assert.equal(versionAtLeast('1.0', RPC_DELIVERY_IDS_SINCE), false);
    assert.equal(versionAtLeast('1.7', '1.1'), true);
    assert.equal(versionAtLeast('2.1', '1.1'), false, 'another major is another protocol');
    assert.equal(versionAtLeast('one', '1.1'), false);
  });

  it('drops records older than the age, and beyond the newest count', () => {
    const entries = [
      { name: 'old', changedAtMs: 0 },
      { name: 'a', changedAtMs: 900 },
      { name: 'b', changedAtMs: 950 },
      { name: 'c', changedAtMs: 990 },
    ];
    assert.deepEqual(expiredDeliveries(entries, 1000, { maxAgeMs: 500, keep: 10 }), ['old']);
    assert.deepEqual(expiredDeliveries(entries, 1000, { maxAgeMs: 5000, keep: 2 }).sort(), ['a', 'old']);
  });
});

describe('delivery ids: the ledger on disk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drover-deliveries-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('claims an id once; while it runs a second claim sees it in flight, after it ends the receipt', async () => {
    const ledger = new DeliveryLedger(join(dir, 'a'));
    const claim = ledger.claim('job-1', { pane: '%3', text: 'run the tests' });
    assert.equal(claim.kind, 'claimed');
    assert.equal(ledger.read('job-1')?.state, 'started', 'recorded before anything is typed');
    const again = ledger.claim('job-1', { pane: '%3', text: 'run the tests' });
    assert.equal(again.kind, 'in_flight', 'this process still runs');
    if (claim.kind !== 'claimed') return;
    const settling = ledger.settled('job-1', { timeoutMs: 10_000 });
    claim.ended({ status: 'submitted', pane_id: '%3' }, 0);
    const settled = await settling;
    assert.equal(settled?.kind, 'replay');
    assert.deepEqual(settled?.record.document, { status: 'submitted', pane_id: '%3' });
    assert.equal(settled?.record.exit_status, 0);
    const third = ledger.claim('job-1', { pane: '%3', text: 'run the tests' });
    assert.equal(third.kind, 'replay');
    assert.deepEqual(readdirSync(join(dir, 'a')), ['job-1.json'], 'no temporary file is left');
  });

  it('gives an id back when nothing was typed, and marks one cut off mid-way for good', () => {
    const ledger = new DeliveryLedger(join(dir, 'b'));
    const first = ledger.claim('x', { pane: '%1', text: 'run the tests' });
    assert.equal(first.kind, 'claimed');
    if (first.kind === 'claimed') first.release();
    const second = ledger.claim('x', { pane: '%1', text: 'run the tests' });
    assert.equal(second.kind, 'claimed', 'released: a resend may deliver');
    if (second.kind === 'claimed') second.interrupted('tmux died mid-paste');
    const third = ledger.claim('x', { pane: '%1', text: 'run the tests' });
    assert.equal(third.kind, 'cut_off');
    assert.equal(third.kind === 'cut_off' ? third.record.problem : undefined, 'tmux died mid-paste');
  });

  it('takes a started record whose process is gone for cut off', async () => {
    const ledger = new DeliveryLedger(join(dir, 'c'));
    assert.equal(ledger.claim('seed', { pane: '%1', text: 'run the tests' }).kind, 'claimed');
    const gone = await run([process.execPath, '-e', 'process.stdout.write(String(process.pid))'], { timeoutMs: 20_000 });
    writeFileSync(join(dir, 'c', 'dead.json'), JSON.stringify({ ...started, delivery_id: 'dead', pid: Number(gone.text()) }));
    const known = ledger.claim('dead', { pane: '%1', text: 'run the tests' });
    assert.equal(known.kind, 'cut_off');
    assert.equal((await ledger.settled('dead', { timeoutMs: 1000 }))?.kind, 'cut_off');
  });

  it('refuses an id already used for another pane or other text, keeping its record; a record without a digest checks the pane alone', () => {
    const ledger = new DeliveryLedger(join(dir, 'e'));
    const first = ledger.claim('tests-1', { pane: '%4', text: 'one' });
    assert.equal(first.kind, 'claimed');
    if (first.kind === 'claimed') first.ended({ status: 'submitted', pane_id: '%4' }, 0);
    const recorded = readFileSync(join(dir, 'e', 'tests-1.json'), 'utf8');
    assert.throws(() => ledger.claim('tests-1', { pane: '%6', text: 'one' }), (error: Error) => error instanceof ArgumentError && /was used at .* for pane %4; .*pick a new id/.test(error.message));
    assert.throws(() => ledger.claim('tests-1', { pane: '%4', text: 'two' }), /for other text;/);
    assert.throws(() => ledger.claim('tests-1', { pane: '%6', text: 'two' }), /for pane %4 and other text;/);
    assert.equal(readFileSync(join(dir, 'e', 'tests-1.json'), 'utf8'), recorded, 'the first delivery’s record is untouched');
    assert.equal(ledger.claim('tests-1', { pane: '%4', text: 'one' }).kind, 'replay', 'the same pane and text: its receipt');
    writeFileSync(join(dir, 'e', 'old.json'), JSON.stringify({ ...started, delivery_id: 'old', state: 'ended', pane: '%4', document: { status: 'submitted' }, exit_status: 0 }));
    assert.equal(ledger.claim('old', { pane: '%4', text: 'anything' }).kind, 'replay');
    assert.throws(() => ledger.claim('old', { pane: '%5', text: 'anything' }), /for pane %4;/);
  });

  it('refuses an id that is not one before writing anything', () => {
    const ledger = new DeliveryLedger(join(dir, 'd'));
    assert.throws(() => ledger.claim('../escape', { pane: '%1', text: 'run the tests' }), /is not a delivery id/);
    assert.throws(() => readdirSync(join(dir, 'd')), /ENOENT/);
  });
});
