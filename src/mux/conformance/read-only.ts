/**
 * The read-only conformance checks: they change nothing a person could see, so they are safe to
 * run live against a real multiplexer (`drover mux probe`). Undeclared verbs are called, but the
 * gate answers those without touching the multiplexer. An unreachable multiplexer fails the
 * reachability check and every other check is then skipped: that run proves nothing.
 */
import { MUX_CAPABILITIES, VERB_CAPABILITY, type GatedVerb } from '../capabilities.js';
import { checkIdentitySet, isIncarnation } from '../identity.js';
import { formatMuxKey, KeySpellingError, parseMuxKey } from '../keys.js';
import { AGENT_STATUSES, type MuxPort, type MuxSnapshot } from '../types.js';
import { SAMPLE_CALLS, describeOutcome, sampleOf, type ConformanceResult } from './common.js';

interface ReadOnlyCheck {
  readonly name: string;
  run(port: MuxPort, snapshot: MuxSnapshot): Promise<string[] | { skipped: string }>;
}

/** Problems with one snapshot's consistency, shared with the world checks. */
export function snapshotProblems(snapshot: MuxSnapshot, port: MuxPort): string[] {
  const problems = checkIdentitySet(snapshot);
  if (!isIncarnation(snapshot.incarnation)) problems.push(`the snapshot names its run ${JSON.stringify(snapshot.incarnation)}, which is not an incarnation (letters, digits, . _ -)`);
  const statuses: readonly string[] = AGENT_STATUSES;
  for (const pane of snapshot.panes) {
    if (pane.agent !== pane.agent.toLowerCase() || pane.agent === '') problems.push(`pane ${pane.paneId} has agent ${JSON.stringify(pane.agent)}; agents are lower-case, or "shell"`);
    if (!statuses.includes(pane.status)) problems.push(`pane ${pane.paneId} has status ${JSON.stringify(pane.status)}`);
    if (typeof pane.cwd !== 'string') problems.push(`pane ${pane.paneId} has no cwd string ("" means unknown)`);
    if (pane.paneLabel !== undefined && pane.paneLabel === pane.terminalTitle) problems.push(`pane ${pane.paneId} reports its title both as paneLabel and terminalTitle`);
  }
  for (const space of snapshot.spaces) {
    const tabs = snapshot.tabs.filter((tab) => tab.spaceId === space.spaceId).length;
    const panes = snapshot.panes.filter((pane) => pane.spaceId === space.spaceId).length;
    if (space.tabCount !== tabs || space.paneCount !== panes) {
      problems.push(`space ${space.spaceId} counts ${space.tabCount} tabs/${space.paneCount} panes but the snapshot carries ${tabs}/${panes}`);
    }
  }
  for (const tab of snapshot.tabs) {
    const panes = snapshot.panes.filter((pane) => pane.tabId === tab.tabId).length;
    if (tab.paneCount !== panes) problems.push(`tab ${tab.tabId} counts ${tab.paneCount} panes but the snapshot carries ${panes}`);
  }
  if (port.declaration.spaces === 'one' && snapshot.spaces.length !== 1) problems.push(`spaces is declared "one" but the snapshot has ${snapshot.spaces.length}`);
  return [...problems, ...focusProblems(snapshot), ...undeclaredFactProblems(snapshot, port)];
}

/** At most one focused space, at most one focused pane per space, and a focused pane is alive. */
export function focusProblems(snapshot: MuxSnapshot): string[] {
  const problems: string[] = [];
  const focusedSpaces = snapshot.spaces.filter((space) => space.focused);
  if (focusedSpaces.length > 1) problems.push(`${focusedSpaces.length} spaces are focused; at most one is on the operator's screen`);
  for (const space of snapshot.spaces) {
    const focused = snapshot.panes.filter((pane) => pane.spaceId === space.spaceId && pane.focused);
    if (focused.length > 1) problems.push(`space ${space.spaceId} has ${focused.length} focused panes`);
    for (const pane of focused) if (!pane.alive) problems.push(`focused pane ${pane.paneId} is not alive`);
  }
  return problems;
}

function undeclaredFactProblems(snapshot: MuxSnapshot, port: MuxPort): string[] {
  const supports = port.declaration.supports;
  const problems: string[] = [];
  for (const pane of snapshot.panes) {
    if (!supports.agentDetection && (pane.agent !== 'shell' || pane.status !== 'unknown')) {
      problems.push(`pane ${pane.paneId} reports agent ${pane.agent}/${pane.status} but agentDetection is not declared`);
    }
    if (!supports.agentSessionRef && pane.agentSession !== undefined) problems.push(`pane ${pane.paneId} carries an agentSession but agentSessionRef is not declared`);
    if (!supports.paneProcess && pane.pid !== undefined) problems.push(`pane ${pane.paneId} carries a pid but paneProcess is not declared`);
    if (!supports.paneGeometry && pane.geometry !== undefined) problems.push(`pane ${pane.paneId} carries a geometry but paneGeometry is not declared`);
  }
  for (const tab of snapshot.tabs) {
    if (!supports.paneGeometry && tab.size !== undefined) problems.push(`tab ${tab.tabId} carries a size but paneGeometry is not declared`);
  }
  return problems;
}

/** Whole cells: a position from 0, a size from 1. */
function cells(value: number, least: number): boolean {
  return Number.isInteger(value) && value >= least;
}

const CHECKS: readonly ReadOnlyCheck[] = [
  {
    name: 'declaration is total and canonical',
    async run(port) {
      const problems: string[] = [];
      const declaration = port.declaration;
      for (const capability of MUX_CAPABILITIES) {
        if (typeof declaration.supports[capability] !== 'boolean') problems.push(`${capability} is not answered`);
      }
      for (const capability of Object.keys(declaration.notes)) {
        if (!(MUX_CAPABILITIES as readonly string[]).includes(capability)) problems.push(`a note explains ${capability}, which is not a capability`);
      }
      for (const key of declaration.unsupportedKeys) {
        try {
          if (formatMuxKey(parseMuxKey(key)) !== key) problems.push(`unsupported key ${key} is not in canonical spelling`);
        } catch (error) {
          if (!(error instanceof KeySpellingError)) throw error;
          problems.push(error.message);
        }
      }
      const latency = declaration.topologyLatency;
      if (latency.kind !== 'push' && !(latency.kind === 'bounded' && latency.ms > 0)) problems.push(`topologyLatency ${JSON.stringify(latency)} is neither push nor a positive bound`);
      if (declaration.spaces !== 'one' && declaration.spaces !== 'many') problems.push(`spaces ${JSON.stringify(declaration.spaces)} is neither one nor many`);
      return problems;
    },
  },
  {
    name: 'snapshot is consistent',
    async run(port, snapshot) {
      return snapshotProblems(snapshot, port);
    },
  },
  {
    name: 'ids are stable across two reads',
    async run(port, first) {
      const second = await port.snapshot();
      const before = new Map(first.panes.map((pane) => [pane.paneId, `${pane.spaceId}/${pane.tabId}`]));
      const problems = second.panes
        .filter((pane) => before.has(pane.paneId) && before.get(pane.paneId) !== `${pane.spaceId}/${pane.tabId}`)
        .map((pane) => `pane ${pane.paneId} moved from ${before.get(pane.paneId)} to ${pane.spaceId}/${pane.tabId} between two reads`);
      if (!port.sameIncarnation(first.incarnation, second.incarnation)) problems.push(`two reads name different runs: ${first.incarnation} and ${second.incarnation}`);
      return problems;
    },
  },
  {
    name: 'an undeclared capability answers unsupported',
    async run(port, snapshot) {
      const sample = sampleOf(snapshot);
      if (sample === undefined) return { skipped: 'the multiplexer shows no pane' };
      const problems: string[] = [];
      for (const [verb, capability] of Object.entries(VERB_CAPABILITY) as [GatedVerb, (typeof VERB_CAPABILITY)[GatedVerb]][]) {
        if (port.declaration.supports[capability]) continue;
        try {
          const outcome = await SAMPLE_CALLS[verb](port, sample);
          if (outcome.ok || outcome.reason !== 'unsupported' || outcome.capability !== capability) {
            problems.push(`${verb} answered ${describeOutcome(outcome)} where unsupported(${capability}) was due`);
          }
        } catch (error) {
          problems.push(`${verb} threw ${(error as Error).message} where unsupported(${capability}) was due`);
        }
      }
      return problems;
    },
  },
  {
    name: 'a stripped grid read has no escapes and names its pane',
    async run(port, snapshot) {
      const sample = sampleOf(snapshot);
      if (!port.declaration.supports.paneGrid) return { skipped: 'paneGrid is not declared' };
      if (sample === undefined) return { skipped: 'the multiplexer shows no pane' };
      const outcome = await port.readGrid(sample.paneId, { scope: 'viewport', styling: 'strip' });
      if (!outcome.ok) return [`a viewport read of ${sample.paneId} answered ${describeOutcome(outcome)}`];
      const problems: string[] = [];
      if (outcome.value.text.includes('\u001b')) problems.push('a stripped read contains an escape character');
      if (outcome.value.paneId !== sample.paneId) problems.push(`a read of ${sample.paneId} answered for ${outcome.value.paneId}`);
      if (typeof outcome.value.revision !== 'string' || outcome.value.revision === '') problems.push('a read carries no revision');
      if (typeof outcome.value.truncated !== 'boolean') problems.push('a read does not say whether it was truncated');
      return problems;
    },
  },
  {
    name: 'a recent read stays within the lines asked for',
    async run(port, snapshot) {
      if (!port.declaration.supports.gridScrollback) return { skipped: 'gridScrollback is not declared' };
      const sample = sampleOf(snapshot);
      if (sample === undefined) return { skipped: 'the multiplexer shows no pane' };
      const outcome = await port.readGrid(sample.paneId, { scope: 'recent', lines: 5, styling: 'preserve' });
      if (!outcome.ok) return [`a recent read of ${sample.paneId} answered ${describeOutcome(outcome)}`];
      const lines = outcome.value.text.split('\n').length;
      return lines > 5 ? [`a 5-line recent read returned ${lines} lines`] : [];
    },
  },
  {
    name: 'a screen reads back as its height in rows, with its cursor inside it or none',
    async run(port, snapshot) {
      if (!port.declaration.supports.paneScreen) return { skipped: 'paneScreen is not declared' };
      const panes = snapshot.panes.filter((pane) => pane.alive).slice(0, 3);
      if (panes.length === 0) return { skipped: 'the multiplexer shows no live pane' };
      const problems: string[] = [];
      for (const pane of panes) {
        const outcome = await port.readScreen(pane.paneId);
        if (!outcome.ok) {
          problems.push(`readScreen(${pane.paneId}) answered ${describeOutcome(outcome)}`);
          continue;
        }
        const { paneId, rows, lines, width, height, cursor } = outcome.value;
        if (paneId !== pane.paneId) problems.push(`a screen of ${pane.paneId} answered for ${paneId}`);
        if (!Number.isInteger(width) || width < 0 || !Number.isInteger(height) || height < 0) problems.push(`the screen of ${pane.paneId} is ${width}×${height}`);
        if (rows.length !== height || lines.length !== height) problems.push(`the screen of ${pane.paneId} has ${rows.length} rows and ${lines.length} lines for a height of ${height}`);
        if (lines.some((line) => line.includes('\u001b'))) problems.push(`the plain lines of ${pane.paneId} carry escape characters`);
        if (cursor !== null && !(Number.isInteger(cursor.x) && Number.isInteger(cursor.y) && cursor.x >= 0 && cursor.x < width && cursor.y >= 0 && cursor.y < height)) {
          problems.push(`the cursor of ${pane.paneId} at ${cursor.x},${cursor.y} is outside its ${width}×${height} screen`);
        }
      }
      return problems;
    },
  },
  {
    name: "a pane's process reads back as the snapshot reports the pane",
    async run(port, snapshot) {
      if (!port.declaration.supports.paneProcess) return { skipped: 'paneProcess is not declared' };
      const panes = snapshot.panes.slice(0, 3);
      if (panes.length === 0) return { skipped: 'the multiplexer shows no pane' };
      const problems: string[] = [];
      for (const pane of panes) {
        const outcome = await port.readProcess(pane.paneId);
        if (!outcome.ok) {
          problems.push(`readProcess(${pane.paneId}) answered ${describeOutcome(outcome)}`);
          continue;
        }
        const { paneId, pid, foreground, dead, exitStatus } = outcome.value;
        if (paneId !== pane.paneId) problems.push(`the process of ${pane.paneId} answered for ${paneId}`);
        if (pid !== null && !(Number.isSafeInteger(pid) && pid > 0)) problems.push(`the process of ${pane.paneId} has pid ${pid}`);
        if (pane.pid !== undefined && pid !== pane.pid) problems.push(`the snapshot gives ${pane.paneId} pid ${pane.pid}, readProcess ${pid}`);
        if (typeof foreground !== 'string') problems.push(`the foreground of ${pane.paneId} is not a string`);
        if (dead === pane.alive) problems.push(`${pane.paneId} is ${pane.alive ? 'alive' : 'dead'} in the snapshot but readProcess says dead is ${dead}`);
        if (!dead && exitStatus !== null) problems.push(`${pane.paneId} is alive but has exit status ${exitStatus}`);
      }
      return problems;
    },
  },
  {
    name: 'every pane sits inside its tab, in whole cells',
    async run(port, snapshot) {
      if (!port.declaration.supports.paneGeometry) return { skipped: 'paneGeometry is not declared' };
      if (snapshot.panes.length === 0) return { skipped: 'the multiplexer shows no pane' };
      const problems: string[] = [];
      const sizes = new Map(snapshot.tabs.map((tab) => [tab.tabId, tab.size]));
      for (const pane of snapshot.panes) {
        const size = sizes.get(pane.tabId);
        const rect = pane.geometry;
        if (size === undefined || rect === undefined) {
          problems.push(`pane ${pane.paneId} or its tab ${pane.tabId} carries no geometry`);
          continue;
        }
        if (!cells(size.width, 1) || !cells(size.height, 1)) problems.push(`tab ${pane.tabId} is ${size.width}×${size.height}`);
        if (!cells(rect.x, 0) || !cells(rect.y, 0) || !cells(rect.width, 1) || !cells(rect.height, 1)) problems.push(`pane ${pane.paneId} is ${rect.width}×${rect.height} at ${rect.x},${rect.y}`);
        else if (rect.x + rect.width > size.width || rect.y + rect.height > size.height) {
          problems.push(`pane ${pane.paneId} (${rect.width}×${rect.height} at ${rect.x},${rect.y}) reaches outside its ${size.width}×${size.height} tab`);
        }
      }
      return problems;
    },
  },
  {
    name: 'refresh is harmless',
    async run(port, before) {
      await port.refresh();
      const after = await port.snapshot();
      const ids = new Set(after.panes.map((pane) => pane.paneId));
      const lost = before.panes.filter((pane) => !ids.has(pane.paneId)).length;
      // A live multiplexer may lose a pane on its own; refresh losing most of them is the problem.
      return lost > 0 && lost === before.panes.length ? ['every pane disappeared across refresh()'] : [];
    },
  },
];

export const READ_ONLY_CHECK_NAMES: readonly string[] = ['the multiplexer is reachable', ...CHECKS.map((check) => check.name)];

/** Runs the read-only set against a port. */
export async function runReadOnlyChecks(port: MuxPort): Promise<ConformanceResult[]> {
  const reachable = await port.reachable();
  let snapshot: MuxSnapshot | undefined;
  let failure: string | undefined;
  try {
    snapshot = await port.snapshot();
  } catch (error) {
    failure = (error as Error).message;
  }
  // reachable() says only yes or no; the snapshot's failure says why, which is what an operator needs.
  const problems =
    snapshot === undefined
      ? [reachable ? `${port.mux} answered reachable but its snapshot failed: ${failure}` : `${port.mux} is not reachable: ${failure}`]
      : reachable
        ? []
        : [`${port.mux} answered not reachable but its snapshot succeeded`];
  const results: ConformanceResult[] = [{ check: READ_ONLY_CHECK_NAMES[0]!, problems }];
  if (problems.length > 0) snapshot = undefined;
  for (const check of CHECKS) {
    if (snapshot === undefined) {
      results.push({ check: check.name, problems: [], skipped: 'the multiplexer could not be read, so this run proves nothing' });
      continue;
    }
    try {
      const outcome = await check.run(port, snapshot);
      results.push(Array.isArray(outcome) ? { check: check.name, problems: outcome } : { check: check.name, problems: [], skipped: outcome.skipped });
    } catch (error) {
      results.push({ check: check.name, problems: [`threw: ${(error as Error).message}`] });
    }
  }
  return results;
}
