/**
 * The model-API mock as a process, for trying an agent by hand and for the agents benchmark:
 *
 *   node dist/test/agents/mock/main.js [--port N] [--log FILE]
 *
 * Prints one JSON line `{"url": …}` when it listens, then serves until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startModelMock } from './server.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, log: { type: 'string' } } });
const mock = await startModelMock({ port: Number(values.port), logFile: values.log });
process.stdout.write(`${JSON.stringify({ url: mock.url })}\n`);
const stop = (): void => void mock.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
