export { type ConformanceResult, type MuxConformanceWorld, type WorldFactory, type WorldInput, PUSH_WAIT_MS, LATENCY_SLACK_MS, UP_WAIT_MS } from './common.js';
export { runReadOnlyChecks, READ_ONLY_CHECK_NAMES, snapshotProblems, focusProblems } from './read-only.js';
export { runWorldChecks, WORLD_CHECK_NAMES } from './world-checks.js';
