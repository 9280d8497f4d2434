import { ArgumentError } from '../process/index.js';

/**
 * Whitespace and the box-drawing block (U+2500–U+257F). tmux hard-wraps typed text at the
 * pane width, and a TUI that frames its composer puts border runes between the wrapped
 * halves; dropping both from both sides makes the comparison wrap- and frame-independent.
 */
const IGNORED = /[\s\u2500-\u257f]/gu;

export function squeeze(text: string): string {
  return text.replace(IGNORED, '');
}

/** How often `text` appears in `screen`, ignoring whitespace, line wraps and box-drawing runes. */
export function countWrapped(screen: string, text: string): number {
  const needle = squeeze(text);
  if (needle === '') throw new ArgumentError('the text to look for has nothing but whitespace and box-drawing characters');
  const haystack = squeeze(screen);
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/**
 * Whether typing added `text` to the screen: it appears more often after than before. A
 * plain containment test would pass whenever the same text already sits in the scrollback.
 */
export function newlyEchoed(before: string, after: string, text: string): boolean {
  return countWrapped(after, text) > countWrapped(before, text);
}
