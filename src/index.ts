/** drover's public library API. */
export * from './tmux/index.js';
export { run, LongLivedChild, RunResult, processDiagnostics, isProcessAlive, DEFAULT_RUN_LIMITS, type RunOptions as ProcessRunOptions, type RunLimits } from './process/index.js';
