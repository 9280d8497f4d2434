export * from './errors.js';
export { Endpoint, resolveExecutable, resolvedSocketPath, tmuxVariable, type EndpointOptions, type EndpointSpec } from './endpoint.js';
export { INCARNATION_FORMAT, incarnationKey, parseIncarnation, sameIncarnation, type ServerIncarnation } from './incarnation.js';
export { Server, failureOf, type ServerOptions, type StartOptions, type AttachOptions, type RunOptions, type GroupResult, type ServerDiagnostics, type OpenControlOptions, type SearchOptions } from './server.js';
export { Session, Window, Pane, WindowLink, type CreationReceipt, type ResizeSpec, type PasteSpec } from './handles.js';
export { Options, Hooks, Environment, Buffers, OptionValue, type BufferInfo } from './settings.js';
export { closeAfter, type Closable } from './lifetime.js';
export { pasteFromBuffer, type BufferPasteOptions } from './paste.js';
export { MAP_DEFAULTS, type MapOptions, type MapItemContext } from './map.js';
export { explainPaneSearch, type PaneSearchPlan, type Pushdown } from './explain.js';
export { criteriaJsonSchema, type JsonSchema } from './criteria-schema.js';
export { CommandResult, clientEnvironment, type CommandTransport, type ExecOptions } from './transport.js';
export { Deadline, DEFAULT_OPERATION_TIMEOUT_MS, type OperationOptions } from './deadline.js';
export { Snapshot, Selection, SessionRecord, WindowRecord, PaneRecord, ClientRecord, WindowLinkRecord, snapshotCommands, CLIENT_FORMAT, type SnapshotOptions } from './snapshot.js';
export { CAPTURE_HOOK, captureHooks, captureHookScopes, parseCaptureHooks, requireNoCaptureHook, type CaptureHookEntry } from './capture-hooks.js';
export { compileTextPattern, type TextTest } from './pattern.js';
export { Criteria, CriteriaError, CRITERIA_VERSION, RELATIONS, criteriaReads, type Expr, type CriteriaJson, type CriteriaEntity, type EvaluableRecord, type CriteriaReads } from './criteria.js';
export * from './catalog.js';
export { parseFramedRows, rowFormat, decodeField, VOLATILE_FIELD_END, DEFAULT_FRAMING_LIMITS, type FramingLimits, type RawRow } from './framing.js';
export { escapeFormat, protectArgument } from './escape.js';
export { isPaneId, isSessionId, isWindowId, checkId, type PaneId, type SessionId, type WindowId, type EntityKind, type IdOf } from './ids.js';
export {
  CREATION_FORMAT,
  setOptionArgs,
  unsetOptionArgs,
  showOptionArgs,
  setHookArgs,
  showHooksArgs,
  unsetHookArgs,
  showEnvironmentArgs,
  unsetEnvironmentArgs,
  respawnPaneArgs,
  leaveModeArgs,
  sendTextArgs,
  sendKeysArgs,
  captureArgs,
  splitArgs,
  pasteBufferArgs,
  resolveLayout,
  layoutNeedsVersion,
  versionAtLeast,
  type SpawnSpec,
  type JoinSpec,
  type BreakSpec,
  type PipeSpec,
  type CopyModeSpec,
  type NewSessionSpec,
  type NewWindowSpec,
  type SplitSpec,
  type SplitDirection,
  type RespawnSpec,
  type CaptureSpec,
  type OptionScope,
  type WaitAction,
} from './commands.js';
export { OwnedDaemon, type OwnedDaemonRecord, type DaemonStartOptions } from './owned.js';
export * from './control/index.js';
export { defaultConfigFiles, loadConfigFiles, type ConfigLoad } from './config-files.js';
