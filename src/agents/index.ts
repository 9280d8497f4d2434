/**
 * What drover knows of each coding agent: how its screen reads (screen rules), how its own
 * hooks report its state, how a prompt is submitted to its composer, how it is launched
 * (providers, project config) and how it is recognised in a process tree. Nothing here
 * finds or drives a pane; the pane verbs above build on it.
 */
export * from './hook-state.js';
export { hookReports, type AgentHookInstaller } from './hooks/index.js';
export * from './process-tree.js';
export * from './project-config.js';
export * from './providers.js';
export * from './screens/index.js';
export * from './setup.js';
export * from './shell-words.js';
export * from './shells.js';
export * from './state.js';
export * from './submit.js';
export { parseYamlFile, yaml } from './yaml.js';
