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
