/**
 * Building elements. Text only ever goes in as text (a text node or textContent): nothing the
 * panes or the server say is ever parsed as HTML, so a pane that prints `<script>` shows it.
 */

type Child = Node | string | null | undefined | false;

export interface Attributes {
  readonly [name: string]: string | boolean | undefined;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/**
 * What identifies a focusable element across a redraw: a link by where it goes, a field by its
 * id, a button by its accessible name. Undefined for anything else.
 */
function focusKey(element: Element): string | undefined {
  if (element instanceof HTMLAnchorElement) return `a ${element.getAttribute('href')}`;
  if (element.id !== '') return `#${element.id}`;
  if (element instanceof HTMLButtonElement) return `button ${element.getAttribute('aria-label') ?? element.textContent}`;
  return undefined;
}

/**
 * Replaces a region's content. Live updates redraw whole regions, so whatever had the keyboard
 * focus inside it gets it back in the new content (found by focusKey): someone moving through
 * the page with Tab is never thrown back to the top by a pane that changed.
 */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  const active = document.activeElement;
  const key = active !== null && active !== parent && parent.contains(active) ? focusKey(active) : undefined;
  parent.replaceChildren();
  append(parent, ...children);
  if (key === undefined) return;
  const again = [...parent.querySelectorAll('a[href], button, input, select, textarea')].find((element) => focusKey(element) === key);
  if (again instanceof HTMLElement) again.focus({ preventScroll: true });
}

/** A button whose action runs on click; it is disabled while the action runs, and with a reason when it may not run at all. */
export function button(label: string, action: () => Promise<void> | void, options: { disabled?: string | null; className?: string; name?: string } = {}): HTMLButtonElement {
  const element = h('button', { type: 'button', class: options.className, 'aria-label': options.name }, label);
  if (options.disabled) {
    element.disabled = true;
    element.title = options.disabled;
    return element;
  }
  element.addEventListener('click', () => {
    element.disabled = true;
    void Promise.resolve(action()).finally(() => {
      element.disabled = false;
    });
  });
  return element;
}
