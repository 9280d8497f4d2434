/**
 * The port's snapshot as JSON (snake_case), one shape for `drover mux snapshot --json` and MCP's
 * `mux_snapshot`: the rows are typed by the schema the tool declares, so the two cannot differ.
 * Absent optional facts are null; each pane carries its key on the run the snapshot was read from.
 */
import { z } from 'zod';
import { formatPaneKey, LOCAL_HOST } from './identity.js';
import { AGENT_STATUSES, type MuxName, type MuxPane, type MuxSnapshot } from './types.js';

const size = { width: z.number(), height: z.number() };

export const muxPaneJsonSchema = z.strictObject({
  pane_id: z.string(),
  pane_key: z.string().describe('the pane id with the server run it lives on: what the pane tools take as pane_key'),
  space_id: z.string(),
  space_label: z.string(),
  space_number: z.number().int(),
  tab_id: z.string(),
  tab_label: z.string().nullable(),
  cwd: z.string(),
  focused: z.boolean(),
  alive: z.boolean(),
  agent: z.string(),
  status: z.enum(AGENT_STATUSES),
  pane_label: z.string().nullable(),
  terminal_title: z.string().nullable(),
  foreground_command: z.string().nullable(),
  readable_lines: z.number().int().nullable(),
  agent_session: z.strictObject({ source: z.string(), agent: z.string(), kind: z.enum(['id', 'path']), value: z.string() }).nullable(),
  geometry: z.strictObject({ x: z.number(), y: z.number(), ...size }).nullable(),
});

export const muxSnapshotJsonSchema = z.strictObject({
  incarnation: z.string().describe('the run of the multiplexer the snapshot was read from'),
  spaces: z.array(
    z.strictObject({
      space_id: z.string(),
      number: z.number().int(),
      label: z.string(),
      focused: z.boolean(),
      active_tab_id: z.string().nullable(),
      tab_count: z.number().int(),
      pane_count: z.number().int(),
      repo_root: z.string().nullable(),
      is_worktree: z.boolean().nullable(),
    }),
  ),
  tabs: z.array(
    z.strictObject({
      tab_id: z.string(),
      space_id: z.string(),
      number: z.number().int(),
      label: z.string(),
      focused: z.boolean(),
      pane_count: z.number().int(),
      size: z.strictObject(size).nullable(),
    }),
  ),
  panes: z.array(muxPaneJsonSchema),
});

export type MuxPaneJson = z.infer<typeof muxPaneJsonSchema>;
export type MuxSnapshotJson = z.infer<typeof muxSnapshotJsonSchema>;

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
