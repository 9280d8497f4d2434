import { foldBody } from '../panes/index.js';
import type { Snapshot } from '../tmux/index.js';

/** A compact tree of sessions, windows and panes for people; names and paths shown printable. */
export function renderSnapshot(snapshot: Snapshot): string[] {
  const lines: string[] = [];
  if (snapshot.sessions.isEmpty()) return ['(no sessions)'];
  for (const session of snapshot.sessions) {
    const attached = (session.sessionAttached as number) > 0 ? ' (attached)' : '';
    lines.push(`${foldBody(session.sessionName)} ${session.sessionId}${attached}`);
    for (const link of session.links()) {
      const window = link.window();
      lines.push(`  ${link.windowIndex}: ${foldBody(window.windowName)} ${window.windowId}${link.windowActive ? ' *' : ''}  ${window.windowWidth}x${window.windowHeight}`);
      for (const pane of window.panes()) {
        const marker = pane.paneActive ? ' *' : '';
        const dead = pane.paneDead ? ' (dead)' : '';
        lines.push(`    ${pane.paneId} ${foldBody(pane.paneCurrentCommand ?? '?')}${dead}${marker}  ${foldBody(pane.paneCurrentPath ?? '')}`);
      }
    }
  }
  return lines;
}
