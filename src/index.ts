/**
 * drover's public library API. The typed tmux client is at the top level; the layers above
 * it are namespaces: `mux` (the multiplexer port), `agents` (what drover knows of each coding
 * agent: screens, hooks, providers), `panes` (agent pane verbs, plus the agent knowledge it
 * was first published with), `workspace` (layout files), `fleet` (members and messages),
 * `hosts` (other machines over ssh: drover-rpc, links and their health) and `mcp` (the MCP
 * application).
 */
export * from './tmux/index.js';
export * as mux from './mux/index.js';
export * as agents from './agents/index.js';
export * as panes from './panes-namespace.js';
export * as workspace from './workspace/index.js';
export * as fleet from './fleet/index.js';
export * as hosts from './hosts/index.js';
export * as mcp from './mcp/index.js';
export * as bridge from './bridge/index.js';
export { run, LongLivedChild, RunResult, processDiagnostics, isProcessAlive, shellQuote, DEFAULT_RUN_LIMITS, type RunOptions as ProcessRunOptions, type RunLimits } from './process/index.js';
