/**
 * The port's snapshot as JSON (snake_case), one shape for `drover mux snapshot --json` and MCP's
 * `mux_snapshot`: the rows are typed by the schema the tool declares, so the two cannot differ.
 * Absent optional facts are null; each pane carries its key on the run the snapshot was read from.
 */
import { formatPaneKey, LOCAL_HOST } from './identity.js';
import type { MuxPaneJson, MuxSnapshotJson } from './json-schemas.js';
import type { MuxName, MuxPane, MuxSnapshot } from './types.js';


function paneJson(pane: MuxPane, paneKey: string): MuxPaneJson {
  return {
    pane_id: pane.paneId,
    pane_key: paneKey,
    space_id: pane.spaceId,
    space_label: pane.spaceLabel,
    space_number: pane.spaceNumber,
    tab_id: pane.tabId,
    tab_label: pane.tabLabel ?? null,
    cwd: pane.cwd,
    focused: pane.focused,
    alive: pane.alive,
    agent: pane.agent,
    status: pane.status,
    pane_label: pane.paneLabel ?? null,
    terminal_title: pane.terminalTitle ?? null,
    foreground_command: pane.foregroundCommand ?? null,
    readable_lines: pane.readableLines ?? null,
    agent_session: pane.agentSession === undefined ? null : { ...pane.agentSession },
    geometry: pane.geometry === undefined ? null : { ...pane.geometry },
  };
}

export function muxSnapshotJson(mux: MuxName, snapshot: MuxSnapshot): MuxSnapshotJson {
  return {
    incarnation: snapshot.incarnation,
    spaces: snapshot.spaces.map((space) => ({
      space_id: space.spaceId,
      number: space.number,
      label: space.label,
      focused: space.focused,
      active_tab_id: space.activeTabId,
      tab_count: space.tabCount,
      pane_count: space.paneCount,
      repo_root: space.repoRoot ?? null,
      is_worktree: space.isWorktree ?? null,
    })),
    tabs: snapshot.tabs.map((tab) => ({
      tab_id: tab.tabId,
      space_id: tab.spaceId,
      number: tab.number,
      label: tab.label,
      focused: tab.focused,
      pane_count: tab.paneCount,
      size: tab.size === undefined ? null : { ...tab.size },
    })),
    panes: snapshot.panes.map((pane) => paneJson(pane, formatPaneKey({ host: LOCAL_HOST, mux, incarnation: snapshot.incarnation, paneId: pane.paneId }))),
  };
}
