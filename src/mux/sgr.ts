/**
 * Terminal text with SGR styling (what `capture-pane -e` and a mux grid read give) as plain
 * rows of styled spans. Only Select Graphic Rendition is interpreted; every other escape
 * sequence (cursor moves, OSC titles and links, charset switches) is dropped, so the spans'
 * text is exactly what a person sees on the row.
 */

/** A palette index (0–255) or a 24-bit colour as `#rrggbb`. */
export type TerminalColor = number | `#${string}`;

export interface TextStyle {
  bold?: true;
  dim?: true;
  italic?: true;
  underline?: true;
  blink?: true;
  inverse?: true;
  hidden?: true;
  strike?: true;
  fg?: TerminalColor;
  bg?: TerminalColor;
}

export interface StyledSpan {
  text: string;
  style: Readonly<TextStyle>;
}

/** One visible row. */
export type StyledRow = readonly StyledSpan[];

const FLAG_ON: Readonly<Record<number, keyof TextStyle>> = { 1: 'bold', 2: 'dim', 3: 'italic', 4: 'underline', 5: 'blink', 7: 'inverse', 8: 'hidden', 9: 'strike' };
const FLAG_OFF: Readonly<Record<number, readonly (keyof TextStyle)[]>> = {
  22: ['bold', 'dim'],
  23: ['italic'],
  24: ['underline'],
  25: ['blink'],
  27: ['inverse'],
  28: ['hidden'],
  29: ['strike'],
};

function hex(value: number): string {
  return Math.max(0, Math.min(255, value)).toString(16).padStart(2, '0');
}

/**
 * An extended colour starting at `params[at]` (the 5 or 2 after 38/48), and how many
 * parameters it used. Colon sub-parameters arrive as their own entries, with the optional
 * colour-space id of `38:2:ID:r:g:b` marked by `colonForm`.
 */
function extendedColor(params: readonly number[], at: number, colonForm: boolean): { color?: TerminalColor; used: number } {
  const mode = params[at];
  if (mode === 5) return { color: Math.max(0, Math.min(255, params[at + 1] ?? 0)), used: 2 };
  if (mode === 2) {
    const skip = colonForm && params.length - at >= 5 ? 1 : 0;
    const [r, g, b] = [params[at + 1 + skip] ?? 0, params[at + 2 + skip] ?? 0, params[at + 3 + skip] ?? 0];
    return { color: `#${hex(r)}${hex(g)}${hex(b)}`, used: 4 + skip };
  }
  return { used: 1 };
}

/** Applies one SGR parameter list (`1;38;5;208` as its string) to a style. */
export function applySgr(style: Readonly<TextStyle>, parameterText: string): TextStyle {
  let next: TextStyle = { ...style };
  const colonForm = parameterText.includes(':');
  const params = parameterText === '' ? [0] : parameterText.split(/[;:]/).map((part) => (part === '' ? 0 : Number(part)));
  for (let i = 0; i < params.length; i += 1) {
    const code = params[i]!;
    if (code === 0) next = {};
    else if (FLAG_ON[code] !== undefined) (next as Record<string, unknown>)[FLAG_ON[code]!] = true;
    else if (FLAG_OFF[code] !== undefined) for (const flag of FLAG_OFF[code]!) delete next[flag];
    else if (code >= 30 && code <= 37) next.fg = code - 30;
    else if (code >= 90 && code <= 97) next.fg = code - 90 + 8;
    else if (code >= 40 && code <= 47) next.bg = code - 40;
    else if (code >= 100 && code <= 107) next.bg = code - 100 + 8;
    else if (code === 39) delete next.fg;
    else if (code === 49) delete next.bg;
    else if (code === 38 || code === 48) {
      const { color, used } = extendedColor(params, i + 1, colonForm);
      if (color !== undefined) next[code === 38 ? 'fg' : 'bg'] = color;
      i += used;
    }
    // Anything else (underline colour 58/59, overline 53, fonts) changes nothing visible here.
  }
  return next;
}

function sameStyle(a: Readonly<TextStyle>, b: Readonly<TextStyle>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof TextStyle>;
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}

// CSI … final byte; OSC … BEL or ST; a two-byte escape (charset designations take one more byte).
const ESCAPE = /\x1b(?:\[([0-9;:?<=>]*)([ -/]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()*+][\s\S]?|[\s\S]?)/g;

/**
 * Parses terminal text into rows of spans. The style carries over from one row to the next,
 * as it does on a terminal (tmux resets it at the start of each captured row anyway).
 */
export function parseStyledText(text: string): StyledRow[] {
  const rows: StyledRow[] = [];
  let style: TextStyle = {};
  for (const line of text.split('\n')) {
    const spans: StyledSpan[] = [];
    const push = (chunk: string): void => {
      const visible = chunk.replace(/[\x00-\x08\x0b-\x1f\x7f\r]/g, '');
      if (visible === '') return;
      const last = spans.at(-1);
      if (last !== undefined && sameStyle(last.style, style)) spans[spans.length - 1] = { text: last.text + visible, style: last.style };
      else spans.push({ text: visible, style: Object.freeze({ ...style }) });
    };
    let at = 0;
    for (const match of line.matchAll(ESCAPE)) {
      push(line.slice(at, match.index));
      at = match.index + match[0].length;
      if (match[3] === 'm' && match[2] === '' && !/[?<=>]/.test(match[1] ?? '')) style = applySgr(style, match[1] ?? '');
    }
    push(line.slice(at));
    rows.push(spans);
  }
  return rows;
}

/** A row's visible text. */
export function rowText(row: StyledRow): string {
  return row.map((span) => span.text).join('');
}

/** Terminal text without any escape sequence: what `capture-pane` without `-e` would give. */
export function stripEscapes(text: string): string {
  return parseStyledText(text).map(rowText).join('\n');
}
