/**
 * drover's public library API. The typed tmux client is at the top level; the layers above
 * it are namespaces: `mux` (the multiplexer port), `panes` (agent pane verbs), `workspace`
 * (layout files), `fleet` (members and messages) and `mcp` (the MCP application).
 */
export * from './tmux/index.js';
export * as mux from './mux/index.js';
export * as panes from './panes/index.js';
export * as workspace from './workspace/index.js';
export * as fleet from './fleet/index.js';
export * as mcp from './mcp/index.js';
export * as bridge from './bridge/index.js';
export { run, LongLivedChild, RunResult, processDiagnostics, isProcessAlive, shellQuote, DEFAULT_RUN_LIMITS, type RunOptions as ProcessRunOptions, type RunLimits } from './process/index.js';
