/**
 * The library's `panes` namespace: the pane verbs, and beside them the agent knowledge
 * (screens, hooks, agent state, submission, providers, process trees) that was published
 * under `panes` before it became the agents layer, so code written against `panes.*` keeps
 * working. Inside drover, agent knowledge is imported from the agents layer.
 */
export * from './panes/index.js';
export * from './agents/index.js';
