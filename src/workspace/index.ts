export {
  WORKSPACE_PROFILE,
  WORKSPACE_VERSION,
  workspaceToJSON,
  type EnvironmentMap,
  type OptionMap,
  type WorkspaceCommand,
  type WorkspaceDocument,
  type WorkspacePane,
  type WorkspaceWindow,
} from './document.js';
export { checkDirectories, createDirectories, declaredDirectories, type DeclaredDirectory } from './directories.js';
export { ApplyError, WorkspaceError, type WorkspaceErrorCode, type WorkspaceErrorDetails } from './errors.js';
export { checkLayout, layoutChecksum, type LayoutCheck } from './layout.js';
export { loadWorkspaceFile, parseWorkspace, type WorkspaceLoadOptions, type WorkspaceParseOptions, type WorkspaceFormat } from './parse.js';
export {
  DETACHED_BUILD_SIZE,
  WorkspacePlan,
  planConflicts,
  planWorkspace,
  tmuxSessionName,
  type MoveWindowArgs,
  type NewSessionArgs,
  type NewWindowArgs,
  type OptionTable,
  type PlanConflict,
  type PlanSize,
  type WorkspacePlanOptions,
  type PlanPrecondition,
  type PlanSnapshot,
  type PlanStep,
  type ReplacePaneArgs,
  type SelectLayoutArgs,
  type SelectPaneArgs,
  type SelectWindowArgs,
  type SendKeysArgs,
  type SetEnvironmentArgs,
  type SetOptionArgs,
  type SleepArgs,
  type SplitWindowArgs,
  type StepEffect,
  type StepOp,
  type StepOperation,
  type SymbolicId,
} from './plan.js';
export {
  ApplyResult,
  DEFAULT_APPLY_TIMEOUT_MS,
  DEFAULT_CLEANUP_TIMEOUT_MS,
  applyPlan,
  captureWorkspaceSnapshot,
  type AppliedEffect,
  type WorkspaceApplyOptions,
  type CompensationState,
  type CreatedRef,
  type EffectOutcome,
} from './apply.js';
export { applyResultJsonSchema, planConflictJsonSchema, workspacePlanJsonSchema, type ApplyResultJson, type WorkspacePlanJson } from './json-schemas.js';
export { importTmuxinator, importTmuxinatorFile, tmuxinatorImportToYaml, type TmuxinatorImport } from './tmuxinator.js';
export { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimits } from './tree.js';
