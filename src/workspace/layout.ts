import { resolveLayout } from '../tmux/index.js';

export type LayoutCheck = { ok: true; layout: string } | { ok: false; reason: string };

/**
 * Resolves a layout as tmux would: a preset name or unique prefix (returned in full), or a
 * saved layout string (`a1b2,80x24,0,0{…}`) whose checksum and grammar are verified and
 * which has a cell for every pane.
 */
export function checkLayout(value: string, paneCount: number): LayoutCheck {
  let resolved: string;
  try {
    resolved = resolveLayout(value);
  } catch {
    return { ok: false, reason: 'not a tmux layout: a preset (even-horizontal, even-vertical, main-horizontal, main-vertical, tiled), a unique prefix of one, or a saved layout string' };
  }
  return /^[0-9a-f]{4},/.test(resolved) ? checkLayoutString(resolved, paneCount) : { ok: true, layout: resolved };
}

/** tmux's layout_checksum: a 16-bit rotate-and-add over the text after the first comma. */
export function layoutChecksum(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    sum = ((sum >> 1) + ((sum & 1) << 15)) & 0xffff;
    sum = (sum + body.charCodeAt(i)) & 0xffff;
  }
  return sum;
}

function checkLayoutString(value: string, paneCount: number): LayoutCheck {
  const body = value.slice(5);
  if (layoutChecksum(body) !== parseInt(value.slice(0, 4), 16)) {
    return { ok: false, reason: 'the saved layout string has a wrong checksum' };
  }
  const cells = countCells(body);
  if (cells === null) return { ok: false, reason: 'the saved layout string is malformed' };
  if (cells < paneCount) return { ok: false, reason: `the saved layout has ${cells} cells for ${paneCount} panes` };
  return { ok: true, layout: value };
}

const MAX_LAYOUT_NESTING = 32;

/** Leaf cells in `WxH,X,Y[,ID]` / `…{cells}` / `…[cells]`, or null when the text does not parse. */
function countCells(body: string): number | null {
  let pos = 0;
  const digits = (): boolean => {
    const start = pos;
    while (pos < body.length && body.charCodeAt(pos) >= 48 && body.charCodeAt(pos) <= 57) pos += 1;
    return pos > start;
  };
  const expect = (char: string): boolean => {
    if (body[pos] !== char) return false;
    pos += 1;
    return true;
  };
  const cell = (nesting: number): number | null => {
    if (nesting > MAX_LAYOUT_NESTING) return null;
    if (!(digits() && expect('x') && digits() && expect(',') && digits() && expect(',') && digits())) return null;
    // An optional pane id: ",<digits>" that is not the start of the next cell ("<digits>x").
    if (body[pos] === ',') {
      const save = pos;
      pos += 1;
      if (!digits() || body[pos] === 'x') pos = save;
    }
    const open = body[pos];
    if (open !== '{' && open !== '[') return 1;
    const close = open === '{' ? '}' : ']';
    pos += 1;
    let total = 0;
    for (;;) {
      const count = cell(nesting + 1);
      if (count === null) return null;
      total += count;
      if (expect(close)) return total;
      if (!expect(',')) return null;
    }
  };
  const total = cell(0);
  return total !== null && pos === body.length ? total : null;
}
