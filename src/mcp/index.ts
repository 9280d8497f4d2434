export {
  Application,
  toolCatalog,
  selfPaneOf,
  offeredOn,
  tmuxLibraryRefusal,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_RESPONSE_BYTES,
  MUTATION_EVIDENCE_BYTES,
  type ApplicationOptions,
  type ApplicationBackend,
  type ApplicationSettings,
} from './application.js';
export { ToolPolicy, TIERS, TOOL_GROUPS, GROUP_NAMES, type Tier, type ToolGroup, type CatalogEntry, type PolicySpec } from './policy.js';
export { CaptureStore, DEFAULT_CAPTURE_LIMITS, type CaptureLimits, type RetainedCapture } from './captures.js';
export { defineTool, type ToolContext, type ToolDefinition } from './tool.js';
export { type HostAccess } from './hosts.js';
export { tmuxTools } from './tools/tmux.js';
export { paneTools } from './tools/panes.js';
export { libraryTools } from './tools/library.js';
export { workspaceTools, fleetTools } from './tools/more.js';
export { CAPABILITIES_TOOL } from './tools/capabilities.js';
export { FrameSplitter, type FrameEvent } from '../process/index.js';
export { StdioTransport, DEFAULT_STDIO_LIMITS, STDIO_ERRORS, type StdioLimits, type StdioEnd } from './stdio.js';
