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

export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
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
