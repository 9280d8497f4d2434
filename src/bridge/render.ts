/**
 * How the page shows a styled span of pane text: CSS classes for the flags, colours as CSS
 * values. Pure and free of the DOM, so the page bundles it and the tests check it directly.
 */
import type { TerminalColor, TextStyle } from '../mux/index.js';

/** The 16 ANSI colours as a dark terminal theme draws them. */
export const ANSI_PALETTE: readonly string[] = Object.freeze([
  '#1e1e1e',
  '#cd3131',
  '#0dbc79',
  '#e5e510',
  '#2472c8',
  '#bc3fbc',
  '#11a8cd',
  '#e5e5e5',
  '#666666',
  '#f14c4c',
  '#23d18b',
  '#f5f543',
  '#3b8eea',
  '#d670d6',
  '#29b8db',
  '#ffffff',
]);

const CUBE_LEVELS = [0, 95, 135, 175, 215, 255];

function hex(value: number): string {
  return value.toString(16).padStart(2, '0');
}

/** A palette index or `#rrggbb` as a CSS colour: 16 ANSI colours, the 6×6×6 cube, then 24 greys. */
export function cssColor(color: TerminalColor): string {
  if (typeof color === 'string') return color;
  if (color < 16) return ANSI_PALETTE[color]!;
  if (color < 232) {
    const index = color - 16;
    const [r, g, b] = [Math.floor(index / 36), Math.floor(index / 6) % 6, index % 6].map((level) => CUBE_LEVELS[level]!);
    return `#${hex(r!)}${hex(g!)}${hex(b!)}`;
  }
  const grey = 8 + (color - 232) * 10;
  return `#${hex(grey)}${hex(grey)}${hex(grey)}`;
}

export interface SpanPresentation {
  readonly classes: readonly string[];
  /** null: the page's own text or background colour. */
  readonly color: string | null;
  readonly background: string | null;
}

const FLAG_CLASSES: readonly (readonly [keyof TextStyle, string])[] = [
  ['bold', 'sgr-bold'],
  ['dim', 'sgr-dim'],
  ['italic', 'sgr-italic'],
  ['underline', 'sgr-underline'],
  ['strike', 'sgr-strike'],
  ['hidden', 'sgr-hidden'],
  ['inverse', 'sgr-inverse'],
];

/** Inverse swaps the colours; a default colour swapped is drawn by the `sgr-inverse` class. */
export function presentSpan(style: Readonly<TextStyle>): SpanPresentation {
  const classes = FLAG_CLASSES.filter(([flag]) => style[flag] === true).map(([, name]) => name);
  const [fg, bg] = style.inverse ? [style.bg, style.fg] : [style.fg, style.bg];
  return { classes, color: fg === undefined ? null : cssColor(fg), background: bg === undefined ? null : cssColor(bg) };
}
