import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameSplitter } from '../../src/process/index.js';

describe('FrameSplitter', () => {
  it('passes frames within the limit, refuses a longer one as it arrives, and keeps reading after it', () => {
    const splitter = new FrameSplitter(8);
    const events = [
      ...splitter.push(Buffer.from('12345678\nabc')),
      ...splitter.push(Buffer.from('defghijklmnop')),
      ...splitter.push(Buffer.from('qrs\nok\r\n')),
      ...splitter.push(Buffer.from('tail')),
    ];
    assert.deepEqual(
      events.map((event) => (event.kind === 'frame' ? event.frame.toString() : event.kind)),
      ['12345678', 'oversize', 'ok\r'],
      'an unterminated tail is never a frame',
    );
  });
});
