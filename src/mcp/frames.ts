import { Transform, type Readable } from 'node:stream';

/**
 * The longest JSON-RPC message `drover mcp` reads, in bytes without its newline: room for the
 * largest input any tool takes (a 1 MiB buffer, escaped), while a client that never sends a
 * newline cannot make it buffer without end.
 */
export const MAX_REQUEST_BYTES = 8 * 1024 * 1024;

/** The JSON-RPC error answering a message that was too long to read; its id is unknown, so null. */
export function oversizedRequestResponse(limit: number): string {
  const message = `request refused: a message longer than ${limit} bytes was not read; send it in smaller requests`;
  return `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message } })}\n`;
}

/**
 * The newline-delimited messages of `input`, each at most `limit` bytes. A longer one is
 * dropped as it arrives (never held whole), `refuse` is given the error response for it, and
 * the messages after it pass as before: one oversized request does not end the session.
 */
export function boundedLines(input: Readable, limit: number, refuse: (response: string) => void): Readable {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let discarding = false;
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? chunk.length : newline + 1;
        const piece = chunk.subarray(start, end);
        const content = piece.length - (newline === -1 ? 0 : 1);
        if (discarding) {
          discarding = newline === -1;
        } else if (pendingBytes + content > limit) {
          pending = [];
          pendingBytes = 0;
          discarding = newline === -1;
          refuse(oversizedRequestResponse(limit));
        } else {
          pending.push(piece);
          pendingBytes += piece.length;
          if (newline !== -1) {
            this.push(Buffer.concat(pending));
            pending = [];
            pendingBytes = 0;
          }
        }
        start = end;
      }
      done();
    },
  });
  input.on('error', (error) => lines.destroy(error));
  return input.pipe(lines);
}
