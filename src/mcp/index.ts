export { Application, toolCatalog, selfPaneOf, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_RESPONSE_BYTES, type ApplicationOptions } from './application.js';
export { ToolPolicy, TIERS, type Tier, type PolicySpec } from './policy.js';
export { CaptureStore, DEFAULT_CAPTURE_LIMITS, type CaptureLimits, type RetainedCapture } from './captures.js';
export { defineTool, type ToolContext, type ToolDefinition } from './tool.js';
export { tmuxTools } from './tools/tmux.js';
export { paneTools } from './tools/panes.js';
export { libraryTools } from './tools/library.js';
export { waitTools, workspaceTools, fleetTools, fleetDatabaseExists } from './tools/more.js';
export { boundedLines, oversizedRequestResponse, MAX_REQUEST_BYTES } from './frames.js';
