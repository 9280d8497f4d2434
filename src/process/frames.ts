/** What the splitter found in the bytes it was given, in order. */
export type FrameEvent = { readonly kind: 'frame'; readonly frame: Buffer } | { readonly kind: 'oversize' };

/**
 * Splits newline-delimited JSON input (MCP over stdio, drover-rpc) into frames of at most `limit` bytes, the newline
 * excluded (a carriage return before it is JSON whitespace, and counts). A longer frame is dropped as it arrives, never held
 * whole: it yields one `oversize` event, and the frames after it pass as before. An
 * unterminated tail is never a frame. No I/O.
 */
export class FrameSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;

  constructor(readonly limit: number) {}

  push(chunk: Buffer): FrameEvent[] {
    const events: FrameEvent[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      if (this.discarding) {
        if (newline !== -1) this.discarding = false;
      } else if (this.pendingBytes + piece.length > this.limit) {
        this.pending = [];
        this.pendingBytes = 0;
        this.discarding = newline === -1;
        events.push({ kind: 'oversize' });
      } else {
        this.pending.push(piece);
        this.pendingBytes += piece.length;
        if (newline !== -1) {
          const frame = Buffer.concat(this.pending, this.pendingBytes);
          this.pending = [];
          this.pendingBytes = 0;
          events.push({ kind: 'frame', frame });
        }
      }
      start = end + 1;
    }
    return events;
  }

}
