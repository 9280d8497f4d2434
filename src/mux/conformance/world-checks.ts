/**
 * The world conformance checks: they need a multiplexer the test owns and may perturb
 * (MuxConformanceWorld), so they run against fakes and owned servers, never live. Each check
 * gets a fresh world. A check that does not apply to the adapter's declaration is skipped.
 */
import { VERB_CAPABILITY, type GatedVerb } from '../capabilities.js';
import { PaneIdLedger } from '../identity.js';
import { MuxError } from '../errors.js';
import type { MuxOutcome, MuxPane, MuxPort, MuxSnapshot } from '../types.js';
import { describeOutcome, PUSH_WAIT_MS, recordWatch, SAMPLE_CALLS, sampleOf, UP_WAIT_MS, waitMs, type ConformanceResult, type MuxConformanceWorld, type WorldFactory } from './common.js';
import { focusProblems, snapshotProblems } from './read-only.js';

type CheckOutcome = string[] | { skipped: string };

interface WorldCheck {
  readonly name: string;
  run(world: MuxConformanceWorld): Promise<CheckOutcome>;
}

function pane(snapshot: MuxSnapshot, paneId: string): MuxPane | undefined {
  return snapshot.panes.find((candidate) => candidate.paneId === paneId);
}

/** What the recorder received once `length` bytes arrived or the push wait ran out, as text. */
async function recorded(recorder: NonNullable<MuxConformanceWorld['recorder']>, length: number): Promise<string> {
  const until = Date.now() + PUSH_WAIT_MS;
  for (;;) {
    const bytes = await recorder.received();
    if (bytes.length >= length || Date.now() > until) return bytes.toString('latin1');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Two distinct live panes, in different tabs when the world has them. */
function twoPanes(snapshot: MuxSnapshot): [MuxPane, MuxPane] | undefined {
  const live = snapshot.panes.filter((candidate) => candidate.alive);
  const first = live[0];
  const second = live.find((candidate) => candidate !== first && candidate.tabId !== first?.tabId) ?? live[1];
  return first === undefined || second === undefined ? undefined : [first, second];
}

function idsOf(snapshot: MuxSnapshot): string {
  return JSON.stringify([snapshot.spaces.map((s) => s.spaceId).sort(), snapshot.tabs.map((t) => t.tabId).sort(), snapshot.panes.map((p) => p.paneId).sort()]);
}

/** What a marker typed through a port over a replaced run must never reach. */
const STRANGER_MARKER = 'typed-into-a-stranger';

/** The old port's pane verbs, each naming `paneId`, where declared. */
function paneCalls(port: MuxPort, paneId: string): [string, () => Promise<MuxOutcome<unknown>>][] {
  const supports = port.declaration.supports;
  const calls: [string, boolean, () => Promise<MuxOutcome<unknown>>][] = [
    ['typeText', supports.typeText, () => port.typeText(paneId, STRANGER_MARKER)],
    ['typeText again', supports.typeText, () => port.typeText(paneId, STRANGER_MARKER)],
    ['pasteText', supports.pasteText, () => port.pasteText(paneId, STRANGER_MARKER)],
    ['sendKeys', supports.sendKeys, () => port.sendKeys(paneId, ['Enter'])],
    ['readGrid', supports.paneGrid, () => port.readGrid(paneId, { scope: 'viewport', styling: 'strip' })],
    ['readScreen', supports.paneScreen, () => port.readScreen(paneId)],
    ['readProcess', supports.paneProcess, () => port.readProcess(paneId)],
    ['renamePane', supports.renamePane, () => port.renamePane(paneId, STRANGER_MARKER)],
    ['splitPane', supports.splitPane, () => port.splitPane({ besidePaneId: paneId, direction: 'right' })],
    ['setFocus', supports.setFocus, () => port.setFocus(paneId)],
    ['resizePane', supports.resizePane, () => port.resizePane(paneId, { height: 3 })],
    ['closePane', supports.closePane, () => port.closePane(paneId)],
  ];
  return calls.filter(([, declared]) => declared).map(([verb, , call]) => [verb, call]);
}

/**
 * The restart leg of the identity check. A multiplexer whose ids outlive a restart answers
 * from the same run with the same ids. One whose ids do not answers as another run: then the
 * port bound to the old run refuses every call (unreachable, replaced) for good, a new port
 * names a different run, and the new run's pane that carries an old id never hears of them.
 */
async function restartProblems(world: MuxConformanceWorld): Promise<string[]> {
  const before = await world.port.snapshot();
  await world.restartMux();
  let after: MuxSnapshot | undefined;
  try {
    after = await world.port.snapshot();
  } catch (error) {
    if (!(error instanceof MuxError && error.replaced)) return [`after a restart snapshot() threw ${(error as Error).message}, neither a snapshot nor a replacement`];
  }
  if (after !== undefined) {
    const problems: string[] = [];
    if (!world.port.sameIncarnation(after.incarnation, before.incarnation)) problems.push(`after a restart the port answered from another run (${after.incarnation}, not ${before.incarnation}) without refusing it as replaced`);
    if (idsOf(after) !== idsOf(before)) problems.push('ids changed across a restart that kept the run');
    return problems;
  }
  const fresh = world.openPort();
  try {
    const problems: string[] = [];
    const newRun = await fresh.snapshot();
    if (fresh.sameIncarnation(newRun.incarnation, before.incarnation)) problems.push('the old port refused the restart as a replacement, but a new port reports the same run');
    // An id both runs hand out is where a port that followed the new run would do harm.
    const shared = before.panes.find((pane) => pane.alive && newRun.panes.some((candidate) => candidate.paneId === pane.paneId));
    if (shared === undefined) return [...problems, "the world's new run shares no pane id with the old one, so the restart proves nothing"];
    const inputs = world.inputs === undefined ? undefined : (await world.inputs()).length;
    for (const [verb, call] of paneCalls(world.port, shared.paneId)) {
      const outcome = await call();
      if (outcome.ok || outcome.reason !== 'unreachable' || outcome.replaced !== true) problems.push(`${verb}(${shared.paneId}) on the old run's port answered ${describeOutcome(outcome)}, not unreachable and replaced`);
    }
    if (await world.port.reachable()) problems.push("reachable() answered true on the old run's port");
    await world.port.serverIncarnation().then(
      (incarnation) => problems.push(`serverIncarnation() answered ${incarnation} on the old run's port`),
      (error: unknown) => {
        if (!(error instanceof MuxError && error.replaced)) problems.push(`serverIncarnation() threw ${(error as Error).message}, not a replacement`);
      },
    );
    const now = await fresh.snapshot();
    if (!now.panes.some((pane) => pane.paneId === shared.paneId)) problems.push(`the new run's ${shared.paneId} is gone: a call through the old port reached it`);
    if (fresh.declaration.supports.paneGrid) {
      const grid = await fresh.readGrid(shared.paneId, { scope: 'viewport', styling: 'strip' });
      if (grid.ok && grid.value.text.includes(STRANGER_MARKER)) problems.push(`the new run's ${shared.paneId} shows text typed through the old port`);
    }
    if (world.inputs !== undefined && (await world.inputs()).length !== inputs) problems.push("a call through the old port reached the new run's input");
    return problems;
  } finally {
    await fresh.close();
  }
}

const CHECKS: readonly WorldCheck[] = [
  {
    name: 'the world is non-trivial and consistent',
    async run(world) {
      const snapshot = await world.port.snapshot();
      const problems = snapshotProblems(snapshot, world.port);
      if (snapshot.panes.filter((candidate) => candidate.alive).length < 3) problems.push('the world starts with fewer than three live panes');
      if (snapshot.tabs.length < 2) problems.push('the world starts with fewer than two tabs');
      if (world.port.declaration.spaces === 'many' && snapshot.spaces.length < 2) problems.push('a many-space multiplexer starts with fewer than two spaces');
      return problems;
    },
  },
  {
    name: 'locatePane places every pane where the snapshot lists it, and a closed one nowhere',
    async run(world) {
      const snapshot = await world.port.snapshot();
      const problems: string[] = [];
      for (const listed of snapshot.panes) {
        const { incarnation, location } = await world.port.locatePane(listed.paneId);
        if (incarnation !== snapshot.incarnation) problems.push(`locatePane(${listed.paneId}) answered for run ${incarnation}, the snapshot for ${snapshot.incarnation}`);
        if (location?.spaceId !== listed.spaceId || location.tabId !== listed.tabId) {
          problems.push(`locatePane(${listed.paneId}) answered ${JSON.stringify(location)}; the snapshot lists it in space ${listed.spaceId}, tab ${listed.tabId}`);
        }
      }
      const supports = world.port.declaration.supports;
      if (!supports.splitPane || !supports.closePane) return problems;
      const split = await world.port.splitPane({ besidePaneId: snapshot.panes.find((candidate) => candidate.alive)!.paneId, direction: 'right' });
      if (!split.ok) return [...problems, `splitPane answered ${describeOutcome(split)}`];
      const closed = await world.port.closePane(split.value.paneId);
      if (!closed.ok) return [...problems, `closePane(${split.value.paneId}) answered ${describeOutcome(closed)}`];
      const gone = await world.port.locatePane(split.value.paneId);
      if (gone.location !== undefined) problems.push(`locatePane of the closed pane ${split.value.paneId} answered ${JSON.stringify(gone.location)}`);
      return problems;
    },
  },
  {
    name: 'refresh sees a silent change',
    async run(world) {
      const tab = (await world.port.snapshot()).tabs[0]!;
      await world.renameTabOutOfBand(tab.tabId, 'renamed-silently', { silent: true });
      await world.port.refresh();
      const label = (await world.port.snapshot()).tabs.find((candidate) => candidate.tabId === tab.tabId)?.label;
      return label === 'renamed-silently' ? [] : [`after refresh() tab ${tab.tabId} is labelled ${JSON.stringify(label)}`];
    },
  },
  {
    name: 'the watch sees an out-of-band rename within the declared latency',
    async run(world) {
      const tab = (await world.port.snapshot()).tabs[0]!;
      const wait = waitMs(world.port);
      const { seen, watch, until } = recordWatch(world.port, {}, wait);
      try {
        if (!(await until(() => seen.up > 0 || seen.down.length > 0, UP_WAIT_MS))) return ['the watch never came up'];
        if (seen.down.length > 0) return [`the watch went down: ${seen.down[0]}`];
        const before = seen.topology;
        await world.renameTabOutOfBand(tab.tabId, 'renamed-out-of-band', { silent: false });
        if (!(await until(() => seen.topology > before))) return [`no topology change was reported within ${wait} ms`];
        return [];
      } finally {
        watch.close();
      }
    },
  },
  {
    name: 'declared verbs work',
    async run(world) {
      const port = world.port;
      const supports = port.declaration.supports;
      const problems: string[] = [];
      const start = await port.snapshot();
      const [first, second] = twoPanes(start) ?? [];
      if (first === undefined || second === undefined) return ['the world has fewer than two live panes'];
      const expectOk = async (what: string, outcome: Promise<{ ok: boolean } & object>): Promise<boolean> => {
        const result = (await outcome) as Parameters<typeof describeOutcome>[0];
        if (!result.ok) problems.push(`${what} answered ${describeOutcome(result)}`);
        return result.ok;
      };
      if (supports.typeText) await expectOk('typeText', port.typeText(first.paneId, 'echo conformance'));
      if (supports.sendKeys) await expectOk('sendKeys', port.sendKeys(first.paneId, ['ctrl+c', 'Enter']));
      if (supports.setFocus && (await expectOk('setFocus', port.setFocus(second.paneId)))) {
        const focused = await port.snapshot();
        if (pane(focused, second.paneId)?.focused !== true) problems.push(`setFocus(${second.paneId}) did not focus it`);
        if (focused.spaces.find((space) => space.spaceId === second.spaceId)?.focused !== true) {
          problems.push(`setFocus(${second.paneId}) did not bring its space forward`);
        }
        problems.push(...focusProblems(focused));
      }
      if (supports.createTab) {
        const created = await port.createTab({ spaceId: first.spaceId, label: 'conformance-tab', cwd: '   ' });
        if (!created.ok) problems.push(`createTab answered ${describeOutcome(created)}`);
        else {
          const after = await port.snapshot();
          const made = pane(after, created.value.paneId);
          if (made === undefined || made.tabId !== created.value.tabId) problems.push(`createTab's pane ${created.value.paneId} is not in tab ${created.value.tabId}`);
          if (supports.renameTab) {
            await expectOk('renameTab', port.renameTab(created.value.tabId, 'conformance-renamed'));
            const label = (await port.snapshot()).tabs.find((tab) => tab.tabId === created.value.tabId)?.label;
            if (label !== 'conformance-renamed') problems.push(`renameTab left the label ${JSON.stringify(label)}`);
          }
          if (supports.closeTab && (await expectOk('closeTab', port.closeTab(created.value.tabId)))) {
            if ((await port.snapshot()).tabs.some((tab) => tab.tabId === created.value.tabId)) problems.push('closeTab left the tab in the snapshot');
          }
        }
      }
      if (supports.createSpace) {
        const created = await port.createSpace({ label: 'conformance-space' });
        if (!created.ok) problems.push(`createSpace answered ${describeOutcome(created)}`);
        else if (!(await port.snapshot()).spaces.some((space) => space.spaceId === created.value.spaceId)) problems.push('createSpace made no space the snapshot shows');
      }
      if (supports.listSessions) await expectOk('listSessions', port.listSessions());
      if (supports.listWorktrees && world.gitRepo !== undefined) {
        const repoRoot = world.gitRepo;
        const listed = await port.listWorktrees({ repoRoot });
        if (!listed.ok) problems.push(`listWorktrees answered ${describeOutcome(listed)}`);
        else if (!listed.value.some((worktree) => worktree.path === repoRoot && !worktree.linked)) problems.push("listWorktrees does not list the repository's own checkout");
        if (supports.createWorktree) {
          const created = await port.createWorktree({ repoRoot, branch: 'conformance/wt' });
          if (!created.ok) problems.push(`createWorktree answered ${describeOutcome(created)}`);
          const relisted = await port.listWorktrees({ repoRoot });
          const linked = relisted.ok ? relisted.value.find((worktree) => worktree.linked) : undefined;
          if (linked === undefined) problems.push('createWorktree left no linked worktree to list');
          else if (supports.openWorktree) {
            const opened = await port.openWorktree({ repoRoot, path: linked.path });
            if (!opened.ok) problems.push(`openWorktree answered ${describeOutcome(opened)}`);
            else if (!opened.value.alreadyOpen) problems.push('openWorktree on an open checkout did not answer alreadyOpen');
          }
        }
      }
      if (supports.closePane && (await expectOk('closePane', port.closePane(second.paneId)))) {
        if (pane(await port.snapshot(), second.paneId) !== undefined) problems.push('closePane left the pane in the snapshot');
      }
      return problems;
    },
  },
  {
    name: 'declared facts are populated',
    async run(world) {
      const supports = world.port.declaration.supports;
      const snapshot = await world.port.snapshot();
      const problems: string[] = [];
      if (supports.agentDetection && !snapshot.panes.some((candidate) => candidate.agent !== 'shell')) problems.push('agentDetection is declared but no pane reports an agent');
      if (supports.agentSessionRef && !snapshot.panes.some((candidate) => candidate.agentSession !== undefined)) problems.push('agentSessionRef is declared but no pane carries an agentSession');
      if (supports.gridScrollback) {
        const deep = snapshot.panes
          .filter((candidate) => candidate.alive && candidate.readableLines !== undefined)
          .sort((a, b) => b.readableLines! - a.readableLines!)[0];
        if (deep === undefined) problems.push('gridScrollback is declared but no pane reports readableLines');
        else {
          const viewport = await world.port.readGrid(deep.paneId, { scope: 'viewport', styling: 'strip' });
          const recent = await world.port.readGrid(deep.paneId, { scope: 'recent', lines: 1000, styling: 'strip' });
          if (!viewport.ok || !recent.ok) problems.push(`grid reads of ${deep.paneId} answered ${describeOutcome(viewport)} / ${describeOutcome(recent)}`);
          else if (recent.value.text.split('\n').length <= viewport.value.text.split('\n').length) problems.push('a recent read reaches no further than the viewport');
        }
      }
      if (supports.paneGrid) {
        const live = snapshot.panes.find((candidate) => candidate.alive)!;
        const styled = await world.port.readGrid(live.paneId, { scope: 'viewport', styling: 'preserve' });
        if (!styled.ok) problems.push(`a styled read answered ${describeOutcome(styled)}`);
        else if (/\u001b(?!\[[0-9;:]*m)/.test(styled.value.text)) problems.push('a preserved read carries escapes other than SGR colour');
      }
      return problems;
    },
  },
  {
    name: 'a printed title never becomes paneLabel and a label round-trips',
    async run(world) {
      if (!world.port.declaration.supports.renamePane) return { skipped: 'renamePane is not declared' };
      const [first, second] = twoPanes(await world.port.snapshot()) ?? [];
      if (first === undefined || second === undefined) return ['the world has fewer than two live panes'];
      const problems: string[] = [];
      const renamed = await world.port.renamePane(first.paneId, 'drover-label');
      if (!renamed.ok) return [`renamePane answered ${describeOutcome(renamed)}`];
      await world.setProgramTitle(second.paneId, 'vim notes.txt');
      let snapshot = await world.port.snapshot();
      if (pane(snapshot, first.paneId)?.paneLabel !== 'drover-label') problems.push(`after renamePane, paneLabel is ${JSON.stringify(pane(snapshot, first.paneId)?.paneLabel)}`);
      const titled = pane(snapshot, second.paneId);
      if (titled?.paneLabel === 'vim notes.txt') problems.push('a title the program wrote was reported as paneLabel');
      if (titled?.terminalTitle !== 'vim notes.txt') problems.push(`a title the program wrote is reported as terminalTitle ${JSON.stringify(titled?.terminalTitle)}`);
      await world.setProgramTitle(first.paneId, 'make test');
      snapshot = await world.port.snapshot();
      const overwritten = pane(snapshot, first.paneId);
      if (overwritten?.paneLabel === 'make test') problems.push('a title the program wrote over a label became paneLabel');
      const cleared = await world.port.renamePane(first.paneId, null);
      if (!cleared.ok) problems.push(`renamePane(null) answered ${describeOutcome(cleared)}`);
      else if (pane(await world.port.snapshot(), first.paneId)?.paneLabel !== undefined) problems.push('renamePane(null) left a paneLabel');
      return problems;
    },
  },
  {
    name: 'ids survive reconnect and rename, are never recycled, and a restart keeps them or voids them for good',
    async run(world) {
      const ledger = new PaneIdLedger();
      const start = await world.port.snapshot();
      ledger.observe(start);
      const problems: string[] = [];
      const expectSame = async (what: string): Promise<MuxSnapshot> => {
        const now = await world.port.snapshot();
        if (idsOf(now) !== idsOf(start)) problems.push(`ids changed across ${what}`);
        ledger.observe(now);
        return now;
      };
      await world.reconnect();
      await expectSame('a reconnect');
      await world.renameTabOutOfBand(start.tabs[0]!.tabId, 'id-check', { silent: false });
      await expectSame('a rename');
      const victim = start.panes.find((candidate) => candidate.alive)!;
      await world.endPane(victim.paneId);
      const survivors = await world.port.snapshot();
      const recycled: string[] = ledger.observe(survivors);
      // Ending a space's last pane can end the space, so the new tabs go where panes remain.
      const spaceId = survivors.panes[0]?.spaceId;
      if (world.port.declaration.supports.createTab && spaceId !== undefined) {
        for (let i = 0; i < 2; i += 1) {
          const created = await world.port.createTab({ spaceId });
          if (!created.ok) problems.push(`createTab answered ${describeOutcome(created)}`);
          recycled.push(...ledger.observe(await world.port.snapshot()));
        }
      }
      if (recycled.length > 0) problems.push(`pane ids were recycled: ${recycled.join(', ')}`);
      return [...problems, ...(await restartProblems(world))];
    },
  },
  {
    name: 'a split pane appears beside its pane, and closing it is for good',
    async run(world) {
      const supports = world.port.declaration.supports;
      if (!supports.splitPane) return { skipped: 'splitPane is not declared' };
      const start = await world.port.snapshot();
      const beside = start.panes.find((candidate) => candidate.alive)!;
      const problems: string[] = [];
      for (const direction of ['right', 'below'] as const) {
        const split = await world.port.splitPane({ besidePaneId: beside.paneId, direction });
        if (!split.ok) {
          problems.push(`splitPane(${direction}) answered ${describeOutcome(split)}`);
          continue;
        }
        const made = pane(await world.port.snapshot(), split.value.paneId);
        if (start.panes.some((candidate) => candidate.paneId === split.value.paneId)) problems.push(`splitPane(${direction}) answered ${split.value.paneId}, which was already there`);
        if (made === undefined || made.tabId !== beside.tabId || split.value.tabId !== beside.tabId) problems.push(`the ${direction} split ${split.value.paneId} is not in ${beside.tabId} beside ${beside.paneId}`);
        else if (supports.paneGeometry) {
          const old = pane(await world.port.snapshot(), beside.paneId)?.geometry;
          const placed = made.geometry;
          const past = old === undefined ? undefined : direction === 'right' ? old.x + old.width : old.y + old.height;
          const start = placed === undefined ? undefined : direction === 'right' ? placed.x : placed.y;
          if (past === undefined || start === undefined || start < past) problems.push(`the ${direction} split ${split.value.paneId} does not start ${direction === 'right' ? 'right of' : 'below'} ${beside.paneId}`);
        }
        if (!supports.closePane) continue;
        const closed = await world.port.closePane(split.value.paneId);
        if (!closed.ok) problems.push(`closePane(${split.value.paneId}) answered ${describeOutcome(closed)}`);
        const again = await world.port.closePane(split.value.paneId);
        if (again.ok || again.reason !== 'gone') problems.push(`closing ${split.value.paneId} again answered ${describeOutcome(again)}, not gone`);
        if (pane(await world.port.snapshot(), split.value.paneId) !== undefined) problems.push(`the closed pane ${split.value.paneId} is still in the snapshot`);
      }
      if (supports.paneProcess) {
        // A program that exits at once: a pane kept on exit still shows it, dead, with its status.
        const kept = await world.port.splitPane({ besidePaneId: beside.paneId, direction: 'right', command: ['sh', '-c', 'exit 7'], keepOnExit: true });
        if (!kept.ok) return [...problems, `a split kept on exit answered ${describeOutcome(kept)}`];
        const until = Date.now() + PUSH_WAIT_MS;
        let fate = await world.port.readProcess(kept.value.paneId);
        while (fate.ok && !fate.value.dead && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 25));
          fate = await world.port.readProcess(kept.value.paneId);
        }
        if (!fate.ok) problems.push(`readProcess of a pane kept on exit answered ${describeOutcome(fate)}`);
        else if (!fate.value.dead || fate.value.exitStatus !== 7) problems.push(`a kept pane whose program exited 7 reads as dead ${fate.value.dead}, status ${fate.value.exitStatus}`);
        if (supports.closePane) await world.port.closePane(kept.value.paneId);
      }
      return problems;
    },
  },
  {
    name: 'a resized pane takes the size asked for, its neighbour the difference',
    async run(world) {
      const supports = world.port.declaration.supports;
      if (!supports.resizePane || !supports.paneGeometry || !supports.splitPane) return { skipped: 'resizePane, paneGeometry and splitPane are not all declared' };
      const top = (await world.port.snapshot()).panes.find((candidate) => candidate.alive)!;
      const split = await world.port.splitPane({ besidePaneId: top.paneId, direction: 'below' });
      if (!split.ok) return [`splitPane(below) answered ${describeOutcome(split)}`];
      const heights = async (): Promise<[number | undefined, number | undefined]> => {
        const now = await world.port.snapshot();
        return [pane(now, top.paneId)?.geometry?.height, pane(now, split.value.paneId)?.geometry?.height];
      };
      const [upper, lower] = await heights();
      if (upper === undefined || lower === undefined) return [`the panes ${top.paneId} and ${split.value.paneId} carry no geometry`];
      const problems: string[] = [];
      // A third of their rows: never what either has after an even split, and room for both.
      const wanted = Math.max(2, Math.floor((upper + lower) / 3));
      const resized = await world.port.resizePane(top.paneId, { height: wanted });
      if (!resized.ok) return [`resizePane answered ${describeOutcome(resized)}`];
      const [after, below] = await heights();
      if (after !== wanted) problems.push(`${top.paneId} is ${after} rows high after resizePane asked for ${wanted}`);
      if (after !== undefined && below !== undefined && after + below !== upper + lower) problems.push(`the two panes had ${upper + lower} rows between them and have ${after + below} after the resize`);
      const again = await world.port.resizePane(top.paneId, { height: wanted });
      if (!again.ok || (await heights())[0] !== wanted) problems.push(`asking again for the size it has answered ${describeOutcome(again)} and left ${top.paneId} ${(await heights())[0]} rows high`);
      return problems;
    },
  },
  {
    name: 'writes stay in order and a two-key batch stays two keys',
    async run(world) {
      const supports = world.port.declaration.supports;
      if (!supports.typeText || !supports.sendKeys) return { skipped: 'typeText and sendKeys are not both declared' };
      if (world.inputs === undefined && world.recorder === undefined) return { skipped: 'the world cannot observe pane input' };
      const target = world.recorder?.paneId ?? (await world.port.snapshot()).panes.find((candidate) => candidate.alive)!.paneId;
      const before = world.inputs === undefined ? 0 : (await world.inputs()).length;
      const typed = await world.port.typeText(target, 'first');
      const keyed = await world.port.sendKeys(target, ['x', 'Enter']);
      const retyped = await world.port.typeText(target, 'second');
      if (!typed.ok || !keyed.ok || !retyped.ok) return [`writes answered ${describeOutcome(typed)}, ${describeOutcome(keyed)}, ${describeOutcome(retyped)}`];
      if (world.inputs === undefined) {
        // The terminal shows only bytes: order and count are what can be checked (Enter is a carriage return).
        const bytes = await recorded(world.recorder!, 'firstx\rsecond'.length);
        return bytes === 'firstx\rsecond' ? [] : [`the pane received ${JSON.stringify(bytes)}, not "firstx\\rsecond"`];
      }
      const received = (await world.inputs()).slice(before).filter((input) => input.paneId === target);
      const shape = received.map((input) => `${input.kind}:${input.payload.length}:${input.kind === 'text' ? input.payload.join('') : ''}`);
      const expected = ['text:1:first', 'keys:2:', 'text:1:second'];
      return JSON.stringify(shape) === JSON.stringify(expected) ? [] : [`the pane received ${JSON.stringify(shape)}, not ${JSON.stringify(expected)}`];
    },
  },
  {
    name: 'a paste arrives as one bracketed paste with its line breaks',
    async run(world) {
      if (!world.port.declaration.supports.pasteText) return { skipped: 'pasteText is not declared' };
      if (world.recorder === undefined) return { skipped: 'the world has no pane that records its raw input' };
      const pasted = await world.port.pasteText(world.recorder.paneId, 'one\ntwo');
      if (!pasted.ok) return [`pasteText answered ${describeOutcome(pasted)}`];
      // A terminal pastes a line break as a carriage return; inside the markers it is not Enter.
      const expected = '\u001b[200~one\rtwo\u001b[201~';
      const bytes = await recorded(world.recorder, expected.length);
      return bytes === expected ? [] : [`the pane received ${JSON.stringify(bytes)}, not ${JSON.stringify(expected)}`];
    },
  },
  {
    name: 'refused keys send nothing',
    async run(world) {
      if (!world.port.declaration.supports.sendKeys) return { skipped: 'sendKeys is not declared' };
      const target = world.recorder === undefined ? (await world.port.snapshot()).panes.find((candidate) => candidate.alive)! : { paneId: world.recorder.paneId };
      const problems: string[] = [];
      const bad = [...world.port.declaration.unsupportedKeys, 'Ctrl+c', 'C-c', 'enter', 'shift+ctrl+a', ''];
      for (const key of bad) {
        const uses = await world.transportUses();
        const inputs = world.inputs === undefined ? undefined : (await world.inputs()).length;
        const outcome = await world.port.sendKeys(target.paneId, ['a', key]);
        if (outcome.ok || outcome.reason !== 'refused') problems.push(`sendKeys(["a", ${JSON.stringify(key)}]) answered ${describeOutcome(outcome)}`);
        if ((await world.transportUses()) !== uses) problems.push(`sendKeys(["a", ${JSON.stringify(key)}]) touched the transport`);
        if (world.inputs !== undefined && (await world.inputs()).length !== inputs) problems.push(`sendKeys(["a", ${JSON.stringify(key)}]) typed something`);
      }
      if (world.recorder !== undefined && world.port.declaration.supports.typeText) {
        // Writes stay in order, so anything a refused batch typed would arrive before this fence.
        const fence = await world.port.typeText(world.recorder.paneId, 'fence');
        const bytes = fence.ok ? await recorded(world.recorder, 'fence'.length) : '';
        if (!fence.ok) problems.push(`typeText("fence") answered ${describeOutcome(fence)}`);
        else if (bytes !== 'fence') problems.push(`the pane received ${JSON.stringify(bytes)} around refused batches, not "fence"`);
      }
      return problems;
    },
  },
  {
    name: 'an undeclared capability touches no transport',
    async run(world) {
      const sample = sampleOf(await world.port.snapshot())!;
      const problems: string[] = [];
      let undeclared = 0;
      for (const [verb, capability] of Object.entries(VERB_CAPABILITY) as [GatedVerb, (typeof VERB_CAPABILITY)[GatedVerb]][]) {
        if (world.port.declaration.supports[capability]) continue;
        undeclared += 1;
        const uses = await world.transportUses();
        const outcome = await SAMPLE_CALLS[verb](world.port, sample);
        if (outcome.ok || outcome.reason !== 'unsupported') problems.push(`${verb} answered ${describeOutcome(outcome)}`);
        if ((await world.transportUses()) !== uses) problems.push(`${verb} touched the transport although ${capability} is not declared`);
      }
      return undeclared === 0 ? { skipped: 'every gated capability is declared' } : problems;
    },
  },
  {
    name: 'a dead pane answers gone',
    async run(world) {
      const supports = world.port.declaration.supports;
      const target = (await world.port.snapshot()).panes.find((candidate) => candidate.alive)!;
      await world.endPane(target.paneId);
      const problems: string[] = [];
      const calls: [string, boolean, () => Promise<Parameters<typeof describeOutcome>[0]>][] = [
        ['readGrid', supports.paneGrid, () => world.port.readGrid(target.paneId, { scope: 'viewport', styling: 'strip' })],
        ['readScreen', supports.paneScreen, () => world.port.readScreen(target.paneId)],
        ['readProcess', supports.paneProcess, () => world.port.readProcess(target.paneId)],
        ['splitPane', supports.splitPane, () => world.port.splitPane({ besidePaneId: target.paneId, direction: 'right' })],
        ['typeText', supports.typeText, () => world.port.typeText(target.paneId, 'x')],
        ['sendKeys', supports.sendKeys, () => world.port.sendKeys(target.paneId, ['Enter'])],
        ['renamePane', supports.renamePane, () => world.port.renamePane(target.paneId, 'x')],
        ['setFocus', supports.setFocus, () => world.port.setFocus(target.paneId)],
        ['resizePane', supports.resizePane, () => world.port.resizePane(target.paneId, { height: 3 })],
        ['closePane', supports.closePane, () => world.port.closePane(target.paneId)],
      ];
      for (const [verb, declared, call] of calls) {
        if (!declared) continue;
        const outcome = await call();
        if (outcome.ok || outcome.reason !== 'gone') problems.push(`${verb} on a dead pane answered ${describeOutcome(outcome)}`);
      }
      return problems;
    },
  },
  {
    name: 'a revision moves with the content and never goes back',
    async run(world) {
      if (!world.port.declaration.supports.paneGrid) return { skipped: 'paneGrid is not declared' };
      const target = (await world.port.snapshot()).panes.find((candidate) => candidate.alive)!;
      const read = async (): Promise<string> => {
        const outcome = await world.port.readGrid(target.paneId, { scope: 'viewport', styling: 'preserve' });
        if (!outcome.ok) throw new Error(`readGrid answered ${describeOutcome(outcome)}`);
        return outcome.value.revision;
      };
      const seen = [await read()];
      const problems: string[] = [];
      if ((await read()) !== seen[0]) problems.push('the revision moved although the content did not');
      for (let i = 0; i < 2; i += 1) {
        await world.changePane(target.paneId);
        const revision = await read();
        if (seen.includes(revision)) problems.push(`after a change the revision ${revision} repeats an earlier one`);
        seen.push(revision);
      }
      return problems;
    },
  },
  {
    name: 'the watch comes up, pushes pane changes and goes down once',
    async run(world) {
      const target = (await world.port.snapshot()).panes.find((candidate) => candidate.alive)!;
      const wait = waitMs(world.port);
      const { seen, watch, until } = recordWatch(world.port, { panes: [target.paneId] }, wait);
      const problems: string[] = [];
      try {
        if (!(await until(() => seen.up > 0 || seen.down.length > 0, UP_WAIT_MS))) return ['the watch never came up'];
        if (world.port.declaration.supports.pushPaneEvents) {
          await world.changePane(target.paneId);
          if (!(await until(() => seen.panes.includes(target.paneId)))) problems.push(`no pane change for ${target.paneId} was pushed within ${wait} ms`);
        }
        await world.takeDown();
        if (!(await until(() => seen.down.length > 0))) problems.push(`onDown did not fire within ${wait} ms of the transport dying`);
        await world.bringUp?.();
        await world.port.refresh();
        if (seen.down.length > 1) problems.push(`onDown fired ${seen.down.length} times`);
        if (seen.up !== 1) problems.push(`onUp fired ${seen.up} times`);
        return problems;
      } finally {
        watch.close();
      }
    },
  },
  {
    name: 'focus is reported per space',
    async run(world) {
      const [, second] = twoPanes(await world.port.snapshot()) ?? [];
      if (second === undefined) return ['the world has fewer than two live panes'];
      await world.focusOutOfBand(second.paneId);
      const snapshot = await world.port.snapshot();
      const problems = focusProblems(snapshot);
      if (pane(snapshot, second.paneId)?.focused !== true) problems.push(`${second.paneId} was focused in the multiplexer but the snapshot does not say so`);
      if (snapshot.spaces.find((space) => space.spaceId === second.spaceId)?.focused !== true) {
        problems.push(`the space of ${second.paneId} is not reported focused`);
      }
      return problems;
    },
  },
  {
    name: 'a dead transport answers unreachable',
    async run(world) {
      const target = (await world.port.snapshot()).panes.find((candidate) => candidate.alive)!;
      await world.takeDown();
      const problems: string[] = [];
      if (await world.port.reachable()) problems.push('reachable() answered true with the transport down');
      try {
        await world.port.snapshot();
        problems.push('snapshot() succeeded with the transport down');
      } catch (error) {
        if (!(error instanceof MuxError)) problems.push(`snapshot() threw ${(error as Error).name}, not a MuxError`);
      }
      const supports = world.port.declaration.supports;
      const call = supports.paneGrid
        ? world.port.readGrid(target.paneId, { scope: 'viewport', styling: 'strip' })
        : supports.typeText
          ? world.port.typeText(target.paneId, 'x')
          : undefined;
      const outcome = call === undefined ? undefined : await call;
      if (outcome !== undefined && (outcome.ok || outcome.reason !== 'unreachable')) problems.push(`a verb with the transport down answered ${describeOutcome(outcome)}`);
      if (world.bringUp !== undefined) {
        await world.bringUp();
        if (!(await world.port.reachable())) problems.push('reachable() stayed false after the transport came back');
      }
      return problems;
    },
  },
];

export const WORLD_CHECK_NAMES: readonly string[] = CHECKS.map((check) => check.name);

/** Runs the world set, each check in a fresh world from `openWorld`; `only` narrows it to some names. */
export async function runWorldChecks(openWorld: WorldFactory, options: { only?: readonly string[] } = {}): Promise<ConformanceResult[]> {
  const results: ConformanceResult[] = [];
  for (const check of CHECKS) {
    if (options.only !== undefined && !options.only.includes(check.name)) continue;
    const world = await openWorld();
    try {
      const outcome = await check.run(world);
      results.push(Array.isArray(outcome) ? { check: check.name, problems: outcome } : { check: check.name, problems: [], skipped: outcome.skipped });
    } catch (error) {
      results.push({ check: check.name, problems: [`threw: ${(error as Error).message}`] });
    } finally {
      await world.close();
    }
  }
  return results;
}
