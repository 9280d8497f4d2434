import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ControlParser, ControlProtocolError, decodeNotification, unescapeOutput, type DecodedNotification, type GuardedBlock } from '../../../src/tmux/index.js';
import { RECORDED_EVENTS, RECORDED_OUTPUT } from './fixtures.js';

const MAX_TEST_LINE = 4096;

interface Parsed {
  blocks: GuardedBlock[];
  notifications: DecodedNotification[];
}

function parse(chunks: readonly Buffer[], limits?: { maxLineBytes?: number; maxBlockBytes?: number }): Parsed {
  const parsed: Parsed = { blocks: [], notifications: [] };
  const parser = new ControlParser({ block: (b) => parsed.blocks.push(b), notification: (line) => parsed.notifications.push(decodeNotification(line)) }, limits);
  for (const chunk of chunks) parser.push(chunk);
  return parsed;
}

/** A small deterministic generator, so a failing chunking can be replayed from its seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cuts a stream into random pieces, often a byte or two long, so every boundary gets hit. */
function randomChunks(stream: Buffer, seed: number): Buffer[] {
  const random = mulberry32(seed);
  const chunks: Buffer[] = [];
  let at = 0;
  while (at < stream.length) {
    const size = random() < 0.3 ? 1 + Math.floor(random() * 3) : 1 + Math.floor(random() * 97);
    // Separate buffers, as a stream delivers them.
    chunks.push(Buffer.from(stream.subarray(at, at + size)));
    at += size;
  }
  return chunks;
}

/** What tmux does to pane output: bytes below space and the backslash become \ooo. */
function escapeLikeTmux(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (const byte of bytes) parts.push(byte < 0x20 || byte === 0x5c ? Buffer.from(`\\${byte.toString(8).padStart(3, '0')}`) : Buffer.from([byte]));
  return Buffer.concat(parts);
}

describe('control-mode parser on recorded tmux 3.3a streams', () => {
  const whole = parse([RECORDED_EVENTS]);

  it('frames every reply block, ok or error, with its guard fields', () => {
    assert.equal(whole.blocks.length, 14);
    const [attach, display, list, missing, a, b, setEmpty, showEmpty] = whole.blocks;
    assert.equal(attach!.flags, 0);
    assert.equal(attach!.guardSuccess, true);
    assert.equal(display!.flags, 1);
    assert.equal(display!.body.toString('utf8'), 'main é 😀\n');
    assert.equal(list!.body.toString(), '@0 sh\n');
    assert.equal(missing!.guardSuccess, false);
    assert.equal(missing!.body.toString(), "can't find pane: %999\n");
    assert.equal(missing!.closing.toString(), `%error ${missing!.time} ${missing!.number} 1`);
    assert.deepEqual([a!.body.toString(), b!.body.toString()], ['a\n', 'b\n']);
    assert.equal(setEmpty!.body.length, 0);
    assert.equal(showEmpty!.body.toString(), '\n');
  });

  it('keeps %pause and %continue written inside a reply as that reply\'s body', () => {
    const bodies = whole.blocks.map((block) => block.body.toString());
    assert.ok(bodies.includes('%pause %0\n'));
    assert.ok(bodies.includes('%continue %0\n'));
    assert.equal(whole.notifications.some((n) => n.kind === 'pause' || n.kind === 'continue'), false);
  });

  it('decodes notifications into typed fields and keeps raw bytes', () => {
    assert.deepEqual(
      whole.notifications.map((n) => n.kind),
      [
        'session-changed',
        'window-add',
        'window-renamed',
        'layout-change',
        'window-pane-changed',
        'unlinked-window-close',
        'unlinked-window-add',
        'sessions-changed',
        'session-renamed',
        'unlinked-window-add',
        'unlinked-window-renamed',
        'pane-mode-changed',
        'window-renamed',
        'pane-mode-changed',
        'window-renamed',
        'subscription-changed',
        'unknown',
        'sessions-changed',
        'unlinked-window-close',
        'unlinked-window-close',
        'exit',
      ],
    );
    const byKind = (kind: string): DecodedNotification[] => whole.notifications.filter((n) => n.kind === kind);
    assert.deepEqual({ session: byKind('session-changed')[0]!.session, name: byKind('session-changed')[0]!.name }, { session: '$0', name: 'main' });
    const renamed = byKind('window-renamed')[0]!;
    assert.equal(renamed.window, '@1');
    assert.equal(renamed.name, 'renamed é');
    assert.equal(renamed.raw.toString('utf8'), '%window-renamed @1 renamed é');
    const layout = byKind('layout-change')[0]!;
    assert.equal(layout.window, '@1');
    assert.equal(layout.layout, '419a,80x24,0,0[80x12,0,0,1,80x11,0,13,2]');
    assert.equal(layout.windowFlags, '');
    assert.deepEqual([byKind('window-pane-changed')[0]!.window, byKind('window-pane-changed')[0]!.pane], ['@1', '%2']);
    assert.deepEqual([byKind('session-renamed')[0]!.session, byKind('session-renamed')[0]!.name], ['$1', 'autre']);
    assert.equal(byKind('unlinked-window-renamed')[0]!.name, 'far');
    const subscription = byKind('subscription-changed')[0]!;
    assert.deepEqual(
      [subscription.name, subscription.session, subscription.window, subscription.windowIndex, subscription.pane, subscription.value],
      ['cmd', '$0', '@0', 0, '%0', 'sh'],
    );
    // save-buffer - writes outside any block; the line is kept, not dropped.
    assert.equal(byKind('unknown')[0]!.raw.toString(), '-: Bad file descriptor');
    assert.equal(byKind('exit')[0]!.reason, undefined);
  });

  it('decodes %output and %extended-output to the exact pane bytes', () => {
    const parsed = parse([RECORDED_OUTPUT]);
    const output = parsed.notifications.filter((n) => n.kind === 'output');
    assert.equal(output.length, 2);
    assert.equal(output[1]!.pane, '%0');
    assert.deepEqual(output[1]!.data, Buffer.concat([Buffer.from('\r\n\x01\x02 tab:\t bs:\\ é 😀 '), Buffer.from([0xff]), Buffer.from('\r\n# ')]));
    const extended = parsed.notifications.filter((n) => n.kind === 'extended-output');
    assert.equal(extended.length, 4);
    assert.equal(extended[0]!.ageMs, 0);
    assert.equal(Buffer.concat(extended.map((n) => n.data!)).toString(), 'echo extended\r\nextended\r\n# ');
  });

  it('gives the same blocks and events for 300 seeded random chunkings', () => {
    const expected = { events: parse([RECORDED_EVENTS]), output: parse([RECORDED_OUTPUT]) };
    for (let seed = 1; seed <= 300; seed += 1) {
      for (const [name, stream] of [['events', RECORDED_EVENTS], ['output', RECORDED_OUTPUT]] as const) {
        const actual = parse(randomChunks(stream, seed));
        assert.deepEqual(actual, expected[name], `${name} stream, seed ${seed}`);
      }
    }
  });

  it('reassembles UTF-8 split between chunks byte by byte', () => {
    const line = Buffer.from('%window-renamed @7 😀é€\n');
    const parsed = parse([...line].map((byte) => Buffer.from([byte])));
    assert.equal(parsed.notifications[0]!.name, '😀é€');
  });
});

describe('control-mode parser limits and framing faults', () => {
  it('fails closed on a line over 256 KiB, even when it arrives in pieces', () => {
    const parser = new ControlParser({ block: () => undefined, notification: () => undefined });
    const piece = Buffer.alloc(64 * 1024, 0x61);
    assert.throws(() => {
      for (let i = 0; i < 5; i += 1) parser.push(piece);
    }, ControlProtocolError);
    assert.throws(() => parser.push(Buffer.from('%sessions-changed\n')), ControlProtocolError);
  });

  it('accepts a line of exactly the limit', () => {
    const parsed = parse([Buffer.concat([Buffer.from('%output %1 '), Buffer.alloc(MAX_TEST_LINE - 11, 0x41), Buffer.from('\n')])], { maxLineBytes: MAX_TEST_LINE });
    assert.equal(parsed.notifications[0]!.data!.length, MAX_TEST_LINE - 11);
  });

  it('fails closed on a terminator outside any block', () => {
    assert.throws(() => parse([Buffer.from('%end 1 2 1\n')]), ControlProtocolError);
    assert.throws(() => parse([Buffer.from('%error 1 2 1\n')]), ControlProtocolError);
  });

  it('keeps body lines that imitate guards with other numbers as body', () => {
    const stream = Buffer.from('%begin 10 20 1\n%end 10 21 1\n%begin 10 20 1\n%error 10 20 0\nok\n%end 10 20 1\n');
    const parsed = parse([stream]);
    assert.equal(parsed.blocks.length, 1);
    assert.equal(parsed.blocks[0]!.body.toString(), '%end 10 21 1\n%begin 10 20 1\n%error 10 20 0\nok\n');
  });

  it('marks a block over the block bound as truncated and still finds its end', () => {
    const stream = Buffer.from(`%begin 1 2 1\n${'x'.repeat(30)}\n${'y'.repeat(30)}\n%end 1 2 1\n%sessions-changed\n`);
    const parsed = parse([stream], { maxBlockBytes: 40 });
    assert.equal(parsed.blocks[0]!.truncated, true);
    assert.equal(parsed.blocks[0]!.bodyBytes, 62);
    assert.equal(parsed.blocks[0]!.body.toString(), `${'x'.repeat(30)}\n`);
    assert.equal(parsed.notifications[0]!.kind, 'sessions-changed');
  });

  it('keeps malformed and unrecognised notifications as unknown with their bytes', () => {
    for (const line of ['%output nopane data', '%window-add 7', '%frobnicate @1', 'plain text', '%window-pane-changed @1']) {
      const decoded = decodeNotification(Buffer.from(line));
      assert.equal(decoded.kind, 'unknown', line);
      assert.equal(decoded.raw.toString(), line);
    }
    assert.equal(decodeNotification(Buffer.from('%exit too far behind')).reason, 'too far behind');
    assert.equal(decodeNotification(Buffer.from('%client-detached client-12')).client, 'client-12');
  });
});

describe('%output unescaping', () => {
  it('round-trips every byte value through tmux escaping', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    assert.deepEqual(unescapeOutput(escapeLikeTmux(all)), all);
  });

  it('leaves a backslash without three octal digits as it is', () => {
    assert.deepEqual(unescapeOutput(Buffer.from('a\\9b\\01')), Buffer.from('a\\9b\\01'));
  });
});
