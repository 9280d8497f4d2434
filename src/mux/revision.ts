/**
 * A grid revision for multiplexers that report none (tmux, zellij): a counter per pane and read
 * shape that moves whenever the content does, so a revision never repeats an earlier one even
 * when the content returns to an earlier state. Compare revisions for equality only.
 */
import { createHash } from 'node:crypto';

export class ContentRevisions {
  private readonly seen = new Map<string, { hash: string; count: number }>();

  /** The revision of `text` as read in `shape` (pane id plus scope and styling). */
  revise(shape: string, text: string): string {
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
    const previous = this.seen.get(shape);
    const count = previous === undefined ? 1 : previous.hash === hash ? previous.count : previous.count + 1;
    this.seen.set(shape, { hash, count });
    return `${count}-${hash}`;
  }
}
