import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import {
  AGENT_STATE_OPTION,
  LEGACY_AGENT_STATE_OPTION,
  agentStatusLabel,
  formatAgentStateValue,
  formatIdleDuration,
  parseAgentStateValue,
  pickAgentStateOption,
  resolveAgentStatus,
} from '../../src/agents/index.js';

const now = 1_800_000_000;
const everyoneAlive = { nowSeconds: now, pidAlive: () => true };

describe('the agent state option', () => {
  it('has the interoperable names', () => {
    assert.equal(AGENT_STATE_OPTION, '@rk_pane_agent_state');
    assert.equal(LEGACY_AGENT_STATE_OPTION, '@rk_agent_state');
  });

  it('parses state, epoch and optional pid', () => {
    assert.deepEqual(parseAgentStateValue('idle:1799999880'), { state: 'idle', epochSeconds: 1799999880 });
    assert.deepEqual(parseAgentStateValue(' waiting:12:345\n'), { state: 'waiting', epochSeconds: 12, pid: 345 });
  });

  it('treats every malformed value as unknown', () => {
    for (const raw of ['', 'idle', 'idle:', 'busy:12', 'IDLE:12', 'idle:12:0', 'idle:12:-4', 'idle:1.5', 'idle:12:34:56', 'idle:-3', 'idle:12:x', ':12']) {
      assert.equal(parseAgentStateValue(raw), undefined, JSON.stringify(raw));
    }
  });

  it('formats what a hook writes, and round-trips', () => {
    assert.equal(formatAgentStateValue({ state: 'active', epochSeconds: now }), `active:${now}`);
    const value = { state: 'waiting' as const, epochSeconds: now, pid: 4242 };
    assert.equal(formatAgentStateValue(value), `waiting:${now}:4242`);
    assert.deepEqual(parseAgentStateValue(formatAgentStateValue(value)), value);
  });

  it('refuses to format a value readers would call unknown', () => {
    assert.throws(() => formatAgentStateValue({ state: 'busy' as 'idle', epochSeconds: now }), ArgumentError);
    assert.throws(() => formatAgentStateValue({ state: 'idle', epochSeconds: 1.5 }), /epoch/);
    assert.throws(() => formatAgentStateValue({ state: 'idle', epochSeconds: now, pid: 0 }), /pid/);
  });

  it('reads the legacy option only when the current one is unset', () => {
    assert.equal(pickAgentStateOption('', 'idle:1'), 'idle:1');
    assert.equal(pickAgentStateOption(undefined, 'idle:1'), 'idle:1');
    assert.equal(pickAgentStateOption('active:2', 'idle:1'), 'active:2');
    assert.equal(pickAgentStateOption('garbage', 'idle:1'), 'garbage', 'a set but broken value is not replaced');
  });
});

describe('resolveAgentStatus', () => {
  it('gives a duration for idle only', () => {
    assert.deepEqual(resolveAgentStatus(`idle:${now - 125}`, everyoneAlive), { state: 'idle', idleDuration: '2m' });
    assert.deepEqual(resolveAgentStatus(`active:${now - 125}`, everyoneAlive), { state: 'active', idleDuration: null });
    assert.deepEqual(resolveAgentStatus(`waiting:${now - 125}`, everyoneAlive), { state: 'waiting', idleDuration: null });
  });

  it('reports a value whose agent process is gone as unknown', () => {
    const checked: number[] = [];
    const status = resolveAgentStatus(`idle:${now}:777`, { nowSeconds: now, pidAlive: (pid) => (checked.push(pid), false) });
    assert.deepEqual(status, { state: null, idleDuration: null });
    assert.deepEqual(checked, [777]);
  });

  it('does not check liveness for a value without a pid', () => {
    assert.equal(resolveAgentStatus(`idle:${now}`, { nowSeconds: now, pidAlive: () => assert.fail('no pid to check') }).state, 'idle');
  });

  it('never reports a negative duration for an epoch in the future', () => {
    assert.equal(resolveAgentStatus(`idle:${now + 30}`, everyoneAlive).idleDuration, '0s');
  });

  it('labels the Agent column', () => {
    assert.equal(agentStatusLabel({ state: 'idle', idleDuration: '2m' }), 'idle (2m)');
    assert.equal(agentStatusLabel({ state: 'waiting', idleDuration: null }), 'waiting');
    assert.equal(agentStatusLabel({ state: null, idleDuration: null }), '—');
  });
});

describe('formatIdleDuration', () => {
  it('floors to seconds, minutes or hours', () => {
    assert.deepEqual([0, 59, 60, 119, 3599, 3600, 7199, 90000].map(formatIdleDuration), ['0s', '59s', '1m', '1m', '59m', '1h', '1h', '25h']);
  });
});
