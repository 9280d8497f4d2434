/**
 * The pane mirror: the pane's text parsed by drover's own SGR parser into rows of styled spans,
 * each span's text set as text. No terminal emulator: cursor moves and other escapes are
 * dropped by the parser, so the mirror shows what the rows say, coloured as the pane colours them.
 */
import { parseStyledText } from '../../mux/sgr.js';
import { presentSpan } from '../render.js';
import { h } from './dom.js';

export function renderMirror(text: string): HTMLElement[] {
  return parseStyledText(text.replace(/\n$/, '')).map((row) => {
    const line = h('div', { class: 'row' });
    for (const span of row) {
      const presentation = presentSpan(span.style);
      const element = h('span', presentation.classes.length > 0 ? { class: presentation.classes.join(' ') } : {});
      element.textContent = span.text;
      // CSSOM, not a style attribute: the page's CSP allows no inline styles.
      if (presentation.color !== null) element.style.color = presentation.color;
      if (presentation.background !== null) element.style.backgroundColor = presentation.background;
      line.appendChild(element);
    }
    return line;
  });
}
