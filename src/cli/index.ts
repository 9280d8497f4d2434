export { runCli, buildProgram, type CommandContext } from './program.js';
export { EXIT, ExitError, UsageError, exitCodeOf, errorDocument, shellQuote, type CliIO } from './io.js';
export { resolveEndpoint, openServer, type SocketFlags, type EndpointSource } from './endpoint.js';
export { EXAMPLES } from './examples.js';
