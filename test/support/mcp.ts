import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LongLivedChild } from '../../src/process/index.js';
import { CLI_PATH } from './cli.js';

/** The SDK's client transport contract over a child started by drover's own runner. */
class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();

  constructor(readonly child: LongLivedChild) {}

  async start(): Promise<void> {
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    void this.child.exited.then(() => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.child.stdin.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await this.child.stop(2000);
  }
}

export interface McpSession {
  readonly client: Client;
  readonly child: LongLivedChild;
  close(): Promise<void>;
}

/**
 * Starts `drover mcp ARGS` and connects the SDK's MCP client to it over stdio; `drover` is the
 * argv that runs the bin (this build's bundle by default, an installed one otherwise).
 */
export async function connectMcp(args: readonly string[], env: NodeJS.ProcessEnv, drover: readonly string[] = [process.execPath, CLI_PATH]): Promise<McpSession> {
  const child = await LongLivedChild.start([...drover, 'mcp', ...args], { env });
  const transport = new ChildStdioTransport(child);
  const client = new Client({ name: 'drover-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    child,
    async close() {
      await client.close();
    },
  };
}

/** A JSON-RPC message as read off the wire, for tests that look beneath the SDK client. */
export type WireMessage = { id?: string | number | null; result?: unknown; error?: { code: number; message: string }; method?: string } & Record<string, unknown>;

export interface WireReader {
  /** Every message read so far. */
  readonly messages: readonly WireMessage[];
  /** The first message, read so far or later, that matches. */
  until(match: (message: WireMessage) => boolean): Promise<WireMessage>;
  stop(): void;
}

/** Reads the newline-delimited messages of a server's output beside whatever else reads it. */
export function jsonLines(stream: NodeJS.ReadableStream): WireReader {
  const messages: WireMessage[] = [];
  const waiters: { match: (message: WireMessage) => boolean; resolve: (message: WireMessage) => void }[] = [];
  let partial = '';
  const listen = (chunk: Buffer | string): void => {
    partial += chunk.toString();
    let newline: number;
    while ((newline = partial.indexOf('\n')) !== -1) {
      const line = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      const message = JSON.parse(line) as WireMessage;
      messages.push(message);
      for (const waiter of [...waiters]) {
        if (waiter.match(message)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
      }
    }
  };
  stream.on('data', listen);
  return {
    messages,
    until(match) {
      const found = messages.find(match);
      return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ match, resolve }));
    },
    stop() {
      stream.off('data', listen);
    },
  };
}

/** Writes to a stream and resolves once it took the data. */
export function write(stream: NodeJS.WritableStream, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => stream.write(data, (error) => (error ? reject(error) : resolve())));
}
