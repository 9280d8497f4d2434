/**
 * The drover web page: triage home, spaces, one pane (mirror, question buttons, composer, keys),
 * and the fleet. Plain DOM code: the page is a handful of views over one JSON API and one event
 * stream, so a framework would add weight and a build step without removing any code here.
 *
 * Live updates: the event stream says what changed; the page re-reads the snapshot, a pane's
 * grid or the inbox accordingly. What the page offers follows the multiplexer's declared
 * capabilities, and an undeclared one is explained where its control would be.
 */
import type { MuxCapability } from '../../mux/index.js';
import { parsePaneKey } from '../../mux/identity.js';
import { ago, hostBanner, paneCardLine, paneName, paneRepo, paneWhere, restartBanner, showsSessions, showsSpaces, staleNote, staleTitleNote } from '../present.js';
import type {
  ConfigView,
  DeviceView,
  EventData,
  FleetListView,
  FleetMemberView,
  GridView,
  InboxView,
  PaneView,
  QuestionView,
  ReplyReceipt,
  SessionsView,
  SnapshotView,
  TriageGroup,
} from '../protocol.js';
import { ApiFailure, api, panePath } from './api.js';
import { button, h, replaceChildren } from './dom.js';
import { renderMirror } from './mirror.js';

/** A pane is shown by its key, so a view opened before a restart never shows the new server's pane of the same id. */
type Route = { view: 'home' } | { view: 'spaces' } | { view: 'pane'; paneKey: string } | { view: 'fleet' } | { view: 'not_found'; address: string };

const GROUP_TITLES: Readonly<Record<TriageGroup, string>> = { needs_you: 'Needs you', finished: 'Finished', working: 'Working', idle: 'Idle' };
const STATE_WORDS: Readonly<Record<PaneView['state'], string>> = { blocked: 'needs you', done: 'done', working: 'working', idle: 'idle', unknown: 'no agent state' };

const state = {
  config: null as ConfigView | null,
  snapshot: null as SnapshotView | null,
  sessions: null as SessionsView | null,
  grid: null as GridView | null,
  scrollback: false,
  fleet: null as FleetListView | null,
  inboxes: new Map<number, InboxView>(),
  /** The last word on a send from each fleet's form: kept when the view is drawn again (the send's own message event redraws it). */
  fleetStatuses: new Map<number, string>(),
  live: 'connecting' as 'connecting' | 'live' | 'reconnecting',
  /** Why the multiplexer's panes cannot be read now (the snapshot's refusal); null while they can. */
  down: null as string | null,
  /** The host the home page shows; null for every host. */
  host: null as string | null,
};

/** Whether panes of other machines are shown, and so each pane says which machine it is on. */
function manyHosts(): boolean {
  return (state.snapshot?.hosts.length ?? 0) > 0;
}

let events: EventSource | undefined;
let snapshotTimer: number | undefined;
let gridTimer: number | undefined;
let fleetTimer: number | undefined;

const app = document.getElementById('app')!;
const liveStatus = h('span', { class: 'live', role: 'status', 'aria-live': 'polite' }, 'connecting');
const nav = h('nav', { 'aria-label': 'Sections' });
const banner = h('div', { id: 'banner' });
const side = h('aside', { class: 'side', 'aria-label': 'All panes' });
const view = h('main', { class: 'view', id: 'view' });

function route(): Route {
  const hash = location.hash.replace(/^#/, '');
  const pane = /^\/pane\/(.+)$/.exec(hash);
  if (pane !== null) {
    try {
      return { view: 'pane', paneKey: decodeURIComponent(pane[1]!) };
    } catch (error) {
      // A cut or hand-edited address (a broken percent-escape) names no pane.
      if (error instanceof URIError) return { view: 'not_found', address: hash };
      throw error;
    }
  }
  if (hash === '/spaces') return { view: 'spaces' };
  if (hash === '/fleet') return { view: 'fleet' };
  return { view: 'home' };
}

function paneHref(paneKey: string): string {
  return `#/pane/${encodeURIComponent(paneKey)}`;
}

/** The pane a route names: by its key, or by a bare id (an address typed by hand) on the run shown now. */
function paneOf(paneKey: string): PaneView | undefined {
  return state.snapshot?.panes.find((pane) => pane.pane_key === paneKey || pane.pane_id === paneKey);
}

/** The pane id a route's key names, for a heading. */
function paneIdOf(paneKey: string): string {
  const parsed = parsePaneKey(paneKey);
  return parsed.ok ? parsed.key.paneId : paneKey;
}

/** What a fleet list says after a member whose pane cannot take its messages now. */
function memberPaneState(member: FleetMemberView): string {
  if (member.stale) return ' · stale: its server was restarted';
  return member.gone ? ' · pane gone' : '';
}

/** Why a pane of the route is not in the snapshot. */
function goneText(paneKey: string): string {
  const parsed = parsePaneKey(paneKey);
  const server = state.snapshot?.server;
  if (parsed.ok && server !== undefined && parsed.key.incarnation !== server.incarnation) {
    return `This pane was on the ${state.config?.mux ?? 'multiplexer'} server before it was restarted; it is gone, and nothing sent to it reaches the new server.`;
  }
  return 'This pane is gone.';
}

function capability(name: MuxCapability): string | null {
  const config = state.config;
  if (config === null) return 'loading';
  if (config.read_only) return 'drover web runs read-only';
  if (config.supports[name]) return null;
  return `${config.mux} cannot do this${config.notes[name] === undefined ? '' : `: ${config.notes[name]}`}`;
}

function failureText(error: unknown): string {
  return error instanceof ApiFailure ? error.message : String(error);
}

// ---- the frame ---------------------------------------------------------------------------

function frame(): void {
  const header = h('header', { class: 'bar' }, h('a', { class: 'brand', href: '#/' }, 'drover'), nav, liveStatus);
  replaceChildren(app, header, banner, h('div', { class: 'layout' }, side, view));
}

function renderNav(): void {
  const counts = state.snapshot?.counts;
  const current = route().view;
  const link = (href: string, label: string, here: boolean): HTMLAnchorElement => h('a', { href, 'aria-current': here ? 'page' : undefined }, label);
  replaceChildren(
    nav,
    link('#/', counts === undefined || counts.needs_you === 0 ? 'Home' : `Home (${counts.needs_you} ${counts.needs_you === 1 ? 'needs' : 'need'} you)`, current === 'home'),
    link('#/spaces', showsSpaces(state.config) ? 'Spaces' : 'Tabs', current === 'spaces'),
    link('#/fleet', 'Fleet', current === 'fleet'),
  );
}

/**
 * Says, above everything, that the multiplexer was restarted and when (the panes shown are the
 * new server's), and which hosts cannot be reached and since when (their panes are stale).
 */
function renderBanner(): void {
  const restart = state.snapshot?.server.restarted ?? null;
  const unreachable = (state.snapshot?.hosts ?? []).filter((host) => !host.reachable);
  const mux = state.config?.mux ?? 'multiplexer';
  replaceChildren(
    banner,
    state.down === null
      ? null
      : h(
          'section',
          { class: 'banner', role: 'region', 'aria-label': 'Multiplexer unreachable' },
          h('p', {}, `The ${mux} server cannot be read: ${state.down}. No pane is shown and nothing can be sent until it answers again; drover web keeps trying.`),
        ),
    restart === null ? null : h('section', { class: 'banner', role: 'region', 'aria-label': 'Server restarted' }, h('p', {}, restartBanner(state.config?.mux ?? 'multiplexer', restart))),
    ...unreachable.map((host) => h('section', { class: 'banner host-down', role: 'region', 'aria-label': `Host ${host.name} unreachable` }, h('p', {}, hostBanner(host)))),
  );
}

function setLive(live: typeof state.live): void {
  state.live = live;
  renderLive();
}

/** The indicator: live only while both the stream and the multiplexer answer. */
function renderLive(): void {
  const shown = state.live === 'live' && state.down !== null ? 'unreachable' : state.live;
  liveStatus.textContent = { live: 'live', connecting: 'connecting…', reconnecting: 'reconnecting…', unreachable: 'multiplexer unreachable' }[shown];
  liveStatus.className = `live ${shown}`;
}

// ---- pairing -----------------------------------------------------------------------------

function showPairing(message?: string): void {
  events?.close();
  events = undefined;
  const code = h('input', { id: 'pair-code', name: 'code', autocomplete: 'one-time-code', autocapitalize: 'characters', spellcheck: 'false', required: true });
  const name = h('input', { id: 'pair-name', name: 'name', value: /Mobi|Android|iPhone/.test(navigator.userAgent) ? 'phone' : 'browser' });
  const status = h('p', { role: 'status', class: 'status' }, message ?? '');
  const form = h(
    'form',
    { class: 'pair', 'aria-label': 'Pair this browser' },
    h('label', { for: 'pair-code' }, 'Pairing code'),
    code,
    h('label', { for: 'pair-name' }, 'Name this device'),
    name,
    h('button', { type: 'submit' }, 'Pair'),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void pair(code.value, name.value, status);
  });
  replaceChildren(
    app,
    h(
      'main',
      { class: 'view pairing' },
      h('h1', {}, 'Pair this browser'),
      h('p', {}, 'Run ', h('code', {}, 'drover web pair'), ' on the machine drover runs on and enter the code it prints (valid 10 minutes, once).'),
      form,
    ),
  );
  const fromLink = /(?:^|[#&])pair=([A-Za-z0-9-]+)/.exec(location.hash);
  if (fromLink !== null) {
    code.value = fromLink[1]!;
    history.replaceState(null, '', `${location.pathname}#/`);
    void pair(code.value, name.value, status);
  }
}

async function pair(code: string, name: string, status: HTMLElement): Promise<void> {
  status.textContent = 'pairing…';
  try {
    await api.post<{ device: DeviceView }>('/api/pair', { code, name });
    await boot();
  } catch (error) {
    status.textContent = failureText(error);
  }
}

// ---- data --------------------------------------------------------------------------------

async function loadSnapshot(): Promise<void> {
  let down: string | null = null;
  try {
    state.snapshot = await api.get<SnapshotView>('/api/snapshot');
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) return showPairing('This browser is no longer paired.');
    // drover web itself out of reach is the stream's to say; drover web's answer says the panes cannot be read.
    if (!(error instanceof ApiFailure) || error.code === 'network') return;
    down = error.message;
  }
  const wasDown = state.down !== null;
  state.down = down;
  // Asked again until the panes can be read: the event that says a server answers again may
  // have come before this refusal did.
  if (down !== null) {
    window.clearTimeout(snapshotTimer);
    snapshotTimer = window.setTimeout(() => void loadSnapshot(), DOWN_RETRY_MS);
  }
  renderLive();
  renderNav();
  renderBanner();
  renderSide();
  const current = route();
  if (current.view === 'home') renderHome();
  else if (current.view === 'spaces') renderSpaces();
  // The composer and keys follow whether anything can be sent: drawn again when that changes,
  // keeping what was typed in the composer.
  else if (current.view === 'pane' && wasDown === (down !== null)) updatePane(current.paneKey);
  else if (current.view === 'pane') {
    const typed = document.querySelector<HTMLTextAreaElement>('form.composer textarea')?.value ?? '';
    renderPane(current.paneKey);
    const textarea = document.querySelector<HTMLTextAreaElement>('form.composer textarea');
    if (textarea !== null) textarea.value = typed;
  }
}

/** How often a page whose multiplexer cannot be read asks for the snapshot again. */
const DOWN_RETRY_MS = 2000;

function scheduleSnapshot(): void {
  window.clearTimeout(snapshotTimer);
  snapshotTimer = window.setTimeout(() => void loadSnapshot(), 250);
}

/** How often a busy pane may refresh the rows. */
const ROWS_REFRESH_MS = 1000;
let rowsTimer: number | undefined;

function throttleRows(): void {
  if (rowsTimer !== undefined) return;
  rowsTimer = window.setTimeout(() => {
    rowsTimer = undefined;
    void loadSnapshot();
  }, ROWS_REFRESH_MS);
}

async function loadSessions(): Promise<void> {
  if (state.config?.supports.listSessions !== true) return;
  try {
    state.sessions = await api.get<SessionsView>('/api/sessions');
  } catch {
    return;
  }
  if (route().view === 'spaces') renderSpaces();
}

async function loadGrid(paneKey: string): Promise<void> {
  const query = state.scrollback ? '?lines=1000' : '';
  try {
    const grid = await api.get<GridView>(`${panePath(paneKey, 'grid')}${query}`);
    const current = route();
    if (current.view !== 'pane' || current.paneKey !== paneKey) return;
    state.grid = grid;
    const mirror = document.getElementById('mirror');
    if (mirror !== null) {
      const atBottom = mirror.scrollTop + mirror.clientHeight >= mirror.scrollHeight - 4;
      replaceChildren(mirror, ...renderMirror(grid.text));
      if (atBottom) mirror.scrollTop = mirror.scrollHeight;
    }
  } catch (error) {
    const mirror = document.getElementById('mirror');
    if (mirror !== null) replaceChildren(mirror, h('p', { class: 'status' }, failureText(error)));
  }
}

function scheduleGrid(paneKey: string): void {
  window.clearTimeout(gridTimer);
  gridTimer = window.setTimeout(() => void loadGrid(paneKey), 50);
}

async function loadFleet(): Promise<void> {
  try {
    state.fleet = await api.get<FleetListView>('/api/fleet');
    for (const fleet of state.fleet.fleets) state.inboxes.set(fleet.fleet_id, await api.get<InboxView>(`/api/fleet/${fleet.fleet_id}/inbox`));
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) return showPairing('This browser is no longer paired.');
  }
  if (route().view === 'fleet') renderFleet();
}

function scheduleFleet(): void {
  window.clearTimeout(fleetTimer);
  fleetTimer = window.setTimeout(() => void loadFleet(), 100);
}

function listen(): void {
  events?.close();
  setLive('connecting');
  const source = new EventSource('/api/events');
  events = source;
  source.addEventListener('open', () => {
    setLive('live');
    // Whatever happened while the stream was down is in a fresh snapshot.
    scheduleSnapshot();
  });
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) {
      setLive('reconnecting');
      // The server refused the stream (a revoked device, a restart): ask again from scratch.
      void api.get('/api/session').then(
        () => window.setTimeout(listen, 2000),
        (error) => (error instanceof ApiFailure && error.status === 401 ? showPairing('This browser is no longer paired.') : window.setTimeout(listen, 2000)),
      );
    } else setLive('reconnecting');
  });
  const on = <K extends keyof EventData>(kind: K, handle: (data: EventData[K]) => void): void =>
    source.addEventListener(kind, (event) => handle(JSON.parse((event as MessageEvent<string>).data) as EventData[K]));
  on('topology', () => scheduleSnapshot());
  on('agent', (data) => {
    scheduleSnapshot();
    // A host's pane changes are seen at its polls (an older host's carry no revision): a state move reads its screen again too.
    const current = route();
    if (current.view === 'pane' && current.paneKey === data.pane_key && paneOf(data.pane_key)?.host !== 'local') scheduleGrid(current.paneKey);
  });
  on('question', () => scheduleSnapshot());
  on('pane', (data) => {
    const current = route();
    // The rows carry each pane's last line and age: a changed pane refreshes them, at most once a second.
    if (current.view === 'home' || current.view === 'pane') throttleRows();
    if (current.view === 'pane' && (current.paneKey === data.pane_key || current.paneKey === data.pane_id) && data.revision !== state.grid?.revision) scheduleGrid(current.paneKey);
  });
  on('fleet', () => scheduleFleet());
  on('host', () => scheduleSnapshot());
  on('restart', () => {
    scheduleSnapshot();
    void loadSessions();
  });
  on('resync', () => {
    scheduleSnapshot();
    scheduleFleet();
    const current = route();
    if (current.view === 'pane') scheduleGrid(current.paneKey);
  });
}

// ---- the triage list ---------------------------------------------------------------------

function paneCard(pane: PaneView): HTMLLIElement {
  const stale = staleTitleNote(pane);
  const old = staleNote(pane);
  const repo = paneRepo(pane);
  return h(
    'li',
    { class: `card group-${pane.group}${pane.stale ? ' stale-row' : ''}` },
    h(
      'a',
      { href: paneHref(pane.pane_key) },
      // Two columns: what the pane is and how it is doing, then where it works and when it last moved.
      h('span', { class: 'name' }, paneName(pane)),
      // A stale row's state is how it was, not how it is: it never reads as live.
      h('span', { class: `state state-${pane.stale ? 'stale' : pane.state}` }, old ?? (pane.finished_unseen ? 'finished' : STATE_WORDS[pane.state])),
      h('span', { class: 'agent' }, paneCardLine(pane, state.config, manyHosts())),
      h('span', { class: 'changed' }, pane.changed_at === null ? '' : h('time', { datetime: pane.changed_at }, `changed ${ago(pane.changed_at)}`)),
      repo === null ? null : h('span', { class: 'repo' }, repo),
      stale === null ? null : h('span', { class: 'stale' }, stale),
      pane.question !== null ? h('span', { class: 'snippet' }, pane.question.snippet) : pane.last_line === null ? null : h('span', { class: 'last-line' }, pane.last_line),
    ),
  );
}

function triageSections(headingLevel: 'h2' | 'h3'): HTMLElement[] {
  const snapshot = state.snapshot;
  // The last snapshot's panes are not shown as if they were there: the banner says why.
  if (state.down !== null) return [h('p', { class: 'note' }, 'The panes cannot be read now.')];
  if (snapshot === null) return [h('p', {}, 'Loading…')];
  const byKey = new Map(snapshot.panes.map((pane) => [pane.pane_key, pane]));
  const ordered = snapshot.triage_keys
    .map((key) => byKey.get(key))
    .filter((pane): pane is PaneView => pane !== undefined && (state.host === null || pane.host === state.host));
  return (['needs_you', 'finished', 'working', 'idle'] as const).flatMap((group) => {
    const panes = ordered.filter((pane) => pane.group === group);
    if (panes.length === 0) return [];
    return [
      h(
        'section',
        { class: `group ${group}`, 'aria-labelledby': `${headingLevel}-${group}` },
        h(headingLevel, { id: `${headingLevel}-${group}` }, `${GROUP_TITLES[group]} (${panes.length})`),
        h('ul', { class: 'cards' }, ...panes.map(paneCard)),
      ),
    ];
  });
}

/** Which machine's panes the home page lists: every one, or one. Shown only when there are other machines. */
function hostFilter(): HTMLElement | null {
  const snapshot = state.snapshot;
  if (snapshot === null || !manyHosts()) return null;
  const names = ['local', ...snapshot.hosts.map((host) => host.name)];
  if (state.host !== null && !names.includes(state.host)) state.host = null;
  const select = h(
    'select',
    { id: 'host-filter' },
    h('option', { value: '' }, 'Every host'),
    ...names.map((name) => h('option', { value: name, selected: state.host === name }, name === 'local' ? 'local (this machine)' : name)),
  );
  select.addEventListener('change', () => {
    state.host = select.value === '' ? null : select.value;
    renderHome();
    renderSide();
  });
  return h('p', { class: 'host-filter' }, h('label', { for: 'host-filter' }, 'Host '), select);
}

function renderHome(): void {
  const snapshot = state.snapshot;
  replaceChildren(
    view,
    h('h1', {}, 'Agents'),
    hostFilter(),
    snapshot !== null && state.down === null && snapshot.panes.length === 0 ? h('p', {}, 'No panes.') : null,
    ...triageSections('h2'),
  );
}

function renderSide(): void {
  replaceChildren(side, ...triageSections('h3'));
}

// ---- spaces ------------------------------------------------------------------------------

/** The multiplexer's sessions, where it keeps several: which one this page shows, and the others by name. */
function sessionList(): HTMLElement | null {
  const sessions = state.sessions;
  if (sessions === null || !showsSessions(sessions)) return null;
  return h(
    'section',
    { class: 'sessions', 'aria-labelledby': 'sessions-title' },
    h('h2', { id: 'sessions-title' }, 'Sessions'),
    h('ul', { 'aria-label': 'Sessions' }, ...sessions.sessions.map((session) => h('li', { 'aria-current': session.current ? 'true' : undefined }, session.current ? `${session.name} (shown here)` : session.name))),
    h('p', { class: 'note' }, 'drover web shows one session; start another drover web on a session to see it.'),
  );
}

function renderSpaces(): void {
  const snapshot = state.snapshot;
  const spaces = showsSpaces(state.config);
  const title = spaces ? 'Spaces' : 'Tabs';
  if (state.down !== null) return replaceChildren(view, h('h1', {}, title), h('p', { class: 'note' }, 'The panes cannot be read now.'));
  if (snapshot === null) return replaceChildren(view, h('h1', {}, title), h('p', {}, 'Loading…'));
  const newTab = (spaceId: string): HTMLButtonElement =>
    button('New tab', async () => {
      try {
        const created = await api.post<{ pane_key: string }>('/api/tabs', { space_id: spaceId });
        location.hash = paneHref(created.pane_key);
      } catch (error) {
        alert(failureText(error));
      }
    }, { disabled: capability('createTab') });
  const newSpace = button('New space', async () => {
    try {
      const created = await api.post<{ pane_key: string }>('/api/spaces', {});
      location.hash = paneHref(created.pane_key);
    } catch (error) {
      alert(failureText(error));
    }
  }, { disabled: capability('createSpace') });
  const tabsOf = (spaceId: string, heading: 'h2' | 'h3'): HTMLElement[] =>
    snapshot.tabs
      .filter((tab) => tab.space_id === spaceId)
      .map((tab) =>
        h(
          'div',
          { class: 'tab' },
          h(heading, {}, `${tab.number}: ${tab.label}`),
          h('ul', { class: 'cards' }, ...snapshot.panes.filter((pane) => pane.tab_id === tab.tab_id).map(paneCard)),
        ),
      );
  // One space (zellij's session): its tabs are the whole layout, with no strip of spaces above them.
  if (!spaces) {
    const only = snapshot.spaces[0];
    return replaceChildren(
      view,
      h('h1', {}, title),
      sessionList(),
      only === undefined ? null : h('div', { class: 'actions' }, newTab(only.space_id), explain('createTab')),
      ...(only === undefined ? [] : tabsOf(only.space_id, 'h2')),
    );
  }
  replaceChildren(
    view,
    h('h1', {}, title),
    sessionList(),
    h('div', { class: 'actions' }, newSpace, explain('createSpace')),
    ...snapshot.spaces.map((space) =>
      h(
        'section',
        { class: 'space', 'aria-labelledby': `space-${space.space_id}` },
        h('h2', { id: `space-${space.space_id}` }, `${space.label}${space.focused ? ' (on screen)' : ''}`),
        h('div', { class: 'actions' }, newTab(space.space_id), explain('createTab')),
        ...tabsOf(space.space_id, 'h3'),
      ),
    ),
  );
}

/** The sentence saying why a control is off, shown under it rather than hidden in a tooltip. */
function explain(name: MuxCapability): HTMLElement | null {
  const why = capability(name);
  return why === null || why === 'loading' ? null : h('p', { class: 'note' }, why);
}

// ---- one pane ----------------------------------------------------------------------------

function renderPane(paneKey: string): void {
  state.grid = null;
  // Shift+Enter puts a line break in the textarea; only a multiplexer that pastes can deliver one.
  const placeholder = state.config?.supports.pasteText === true ? 'Reply… (Shift+Enter for a new line)' : 'Reply… (one line)';
  const textarea = h('textarea', { id: 'reply-text', rows: '2', placeholder, 'aria-label': 'Reply text', enterkeyhint: 'send' });
  const receipt = h('p', { id: 'receipt', role: 'status', class: 'receipt' });
  const send = h('button', { type: 'submit' }, 'Send');
  const composer = h('form', { class: 'composer', 'aria-label': 'Reply' }, textarea, send, receipt);
  const readOnly = state.config?.read_only === true;
  const unreachable = state.down === null ? null : 'the multiplexer cannot be reached: nothing can be sent';
  if (readOnly || unreachable !== null || capability('typeText') !== null) {
    textarea.disabled = true;
    send.disabled = true;
    receipt.textContent = unreachable ?? capability('typeText') ?? '';
  }
  composer.addEventListener('submit', (event) => {
    event.preventDefault();
    void reply(paneKey, textarea, receipt);
  });
  textarea.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  const tray = h(
    'div',
    { class: 'keys', role: 'toolbar', 'aria-label': 'Keys' },
    ...(state.config?.keys_tray ?? []).map((entry) =>
      button(entry.label, () => sendKeys(paneKey, [entry.key], receipt), {
        disabled: entry.refused ?? unreachable ?? capability('sendKeys'),
        // The accessible name starts with the visible label, so speech input finds the button by what it shows.
        name: `${entry.label}: send ${entry.key}`,
      }),
    ),
  );
  const scrollback = h('input', { type: 'checkbox', id: 'scrollback' });
  scrollback.checked = state.scrollback;
  scrollback.disabled = state.config?.supports.gridScrollback !== true;
  scrollback.addEventListener('change', () => {
    state.scrollback = scrollback.checked;
    void loadGrid(paneKey);
  });
  replaceChildren(
    view,
    h(
      'section',
      { class: 'pane', 'aria-labelledby': 'pane-title' },
      h('h1', { id: 'pane-title' }, paneIdOf(paneKey)),
      h('p', { id: 'pane-meta', class: 'meta' }),
      h('div', { id: 'question' }),
      h('div', { id: 'mirror', class: 'mirror', role: 'region', 'aria-label': 'Pane screen', tabindex: '0' }),
      h('label', { class: 'scrollback' }, scrollback, state.config?.supports.gridScrollback === true ? ' scrollback' : ` scrollback (${capability('gridScrollback') ?? ''})`),
      composer,
      tray,
      h('div', { id: 'pane-actions', class: 'actions' }),
    ),
  );
  updatePane(paneKey);
  void loadGrid(paneKey);
}

function updatePane(paneKey: string): void {
  const pane = paneOf(paneKey);
  const title = document.getElementById('pane-title');
  const meta = document.getElementById('pane-meta');
  if (title === null || meta === null) return;
  if (state.down !== null || pane === undefined) {
    title.textContent = paneIdOf(paneKey);
    meta.textContent = state.down !== null ? 'This pane cannot be read now: the multiplexer cannot be reached.' : state.snapshot === null ? 'Loading…' : goneText(paneKey);
    return;
  }
  // An address typed with a bare id is pinned to the pane it found, so a later restart cannot move it to another.
  if (pane.pane_key !== paneKey) return location.replace(paneHref(pane.pane_key));
  title.textContent = paneName(pane);
  meta.textContent = [
    manyHosts() ? `on ${pane.host}` : null,
    staleNote(pane),
    paneWhere(pane, state.config),
    pane.agent ?? pane.foreground ?? 'shell',
    pane.finished_unseen ? 'finished' : STATE_WORDS[pane.state],
    pane.verifiable ? 'replies verified' : 'replies not verifiable',
    staleTitleNote(pane),
  ]
    .filter((part) => part !== null)
    .join(' · ');
  renderQuestion(paneKey, pane.question);
  renderActions(pane);
}

function renderQuestion(paneKey: string, question: QuestionView | null): void {
  const box = document.getElementById('question');
  if (box === null) return;
  if (question === null) return replaceChildren(box);
  if (box.dataset.question === question.id) return;
  box.dataset.question = question.id;
  const status = h('p', { role: 'status', class: 'status' });
  const disabled = state.config?.read_only ? 'drover web runs read-only' : capability('sendKeys');
  replaceChildren(
    box,
    h(
      'div',
      { class: 'question', role: 'group', 'aria-label': 'Question' },
      h('p', { class: 'asks' }, question.snippet),
      question.options.length === 0 ? h('p', { class: 'note' }, 'Answer with a reply below.') : null,
      h(
        'div',
        { class: 'options' },
        ...question.options.map((option, index) =>
          button(option.label, async () => {
            status.textContent = 'answering…';
            try {
              await api.post(panePath(paneKey, 'answer'), { question: question.id, option: index });
              status.textContent = `answered: ${option.label}`;
            } catch (error) {
              status.textContent = failureText(error);
              scheduleSnapshot();
            }
          }, { disabled }),
        ),
      ),
      status,
    ),
  );
}

function renderActions(pane: PaneView): void {
  const box = document.getElementById('pane-actions');
  if (box === null || box.dataset.pane === `${pane.pane_key}:${pane.label ?? ''}`) return;
  box.dataset.pane = `${pane.pane_key}:${pane.label ?? ''}`;
  const status = h('p', { role: 'status', class: 'status' });
  const act = (label: string, name: MuxCapability, run: () => Promise<void>): HTMLElement[] => {
    const control = button(label, async () => {
      try {
        await run();
      } catch (error) {
        status.textContent = failureText(error);
      }
    }, { disabled: capability(name) });
    return [control, ...(explain(name) === null ? [] : [explain(name)!])];
  };
  replaceChildren(
    box,
    ...act('Show in terminal', 'setFocus', async () => {
      await api.post(panePath(pane.pane_key, 'focus'));
      status.textContent = 'shown in the terminal';
    }),
    ...act('Rename', 'renamePane', async () => {
      const label = prompt('New name for this pane (empty clears it)', pane.label ?? '');
      if (label === null) return;
      await api.post(panePath(pane.pane_key, 'rename'), { label: label.trim() === '' ? null : label });
      scheduleSnapshot();
    }),
    ...act('Close pane', 'closePane', async () => {
      if (!confirm(`Close ${paneName(pane)}? Whatever runs in it ends.`)) return;
      await api.post(panePath(pane.pane_key, 'close'));
      location.hash = '#/';
    }),
    status,
  );
}

async function reply(paneKey: string, textarea: HTMLTextAreaElement, receipt: HTMLElement): Promise<void> {
  const text = textarea.value;
  if (text.trim() === '') return;
  const pane = paneOf(paneKey);
  receipt.textContent = pane?.verifiable ? 'delivering (drover checks the agent took it)…' : 'typing…';
  try {
    const result = await api.post<ReplyReceipt>(panePath(paneKey, 'reply'), { text, question: pane?.question?.options.length === 0 ? pane.question.id : undefined });
    receipt.textContent = `${result.status.replace('_', ' ')}: ${result.reason}`;
    if (result.status !== 'failed') textarea.value = '';
  } catch (error) {
    receipt.textContent = failureText(error);
  }
}

async function sendKeys(paneKey: string, keys: string[], receipt: HTMLElement): Promise<void> {
  try {
    await api.post(panePath(paneKey, 'keys'), { keys });
    receipt.textContent = `sent ${keys.join(' ')}`;
  } catch (error) {
    receipt.textContent = failureText(error);
  }
}

// ---- the fleet ---------------------------------------------------------------------------

function renderFleet(): void {
  const fleet = state.fleet;
  if (fleet === null) return replaceChildren(view, h('h1', {}, 'Fleet'), h('p', {}, 'Loading…'));
  if (!fleet.available) return replaceChildren(view, h('h1', {}, 'Fleet'), h('p', { class: 'note' }, fleet.reason ?? 'no fleet'));
  // What a person was writing, and to whom, stays when the view is drawn again.
  const existing = new Map([...view.querySelectorAll<HTMLTextAreaElement>('textarea[data-fleet]')].map((area) => [area.dataset.fleet!, area.value]));
  const chosen = new Map([...view.querySelectorAll<HTMLSelectElement>('select[data-fleet]')].map((select) => [select.dataset.fleet!, select.value]));
  replaceChildren(
    view,
    h('h1', {}, 'Fleet'),
    fleet.fleets.length === 0 ? h('p', {}, 'No fleets.') : null,
    ...fleet.fleets.map((entry) => {
      const inbox = state.inboxes.get(entry.fleet_id);
      const names = new Map(entry.members.map((member) => [member.member_id, member.name]));
      const recipients = entry.members.filter((member) => member.kind === 'member');
      const to = h('select', { id: `to-${entry.fleet_id}`, 'aria-label': 'To', 'data-fleet': String(entry.fleet_id) }, ...recipients.map((member) => h('option', { value: String(member.member_id) }, member.name)));
      const recipient = chosen.get(String(entry.fleet_id));
      if (recipient !== undefined && recipients.some((member) => String(member.member_id) === recipient)) to.value = recipient;
      const text = h('textarea', { id: `message-${entry.fleet_id}`, rows: '2', 'aria-label': 'Message', 'data-fleet': String(entry.fleet_id) });
      text.value = existing.get(String(entry.fleet_id)) ?? '';
      const statusId = `fleet-status-${entry.fleet_id}`;
      const status = h('p', { role: 'status', class: 'status', id: statusId }, state.fleetStatuses.get(entry.fleet_id) ?? '');
      const form = h('form', { class: 'composer', 'aria-label': 'Send as Director' }, to, text, h('button', { type: 'submit', disabled: recipients.length === 0 || state.config?.read_only === true }, 'Send'), status);
      // The view may be drawn again while a send is under way: say it in whichever form is on the page then.
      const say = (words: string): void => {
        state.fleetStatuses.set(entry.fleet_id, words);
        const shown = document.getElementById(statusId);
        if (shown !== null) shown.textContent = words;
      };
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        void (async () => {
          say('sending…');
          try {
            const sent = await api.post<{ notification_sent: boolean; diagnostic: string | null; message: { message_id: number } }>(`/api/fleet/${entry.fleet_id}/messages`, { to: Number(to.value), text: text.value });
            say(sent.notification_sent ? `message ${sent.message.message_id} delivered` : `message ${sent.message.message_id} stored; ${sent.diagnostic ?? 'delivery pending'}`);
            const composer = document.getElementById(`message-${entry.fleet_id}`) as HTMLTextAreaElement | null;
            if (composer !== null) composer.value = '';
            text.value = '';
          } catch (error) {
            say(failureText(error));
          }
        })();
      });
      return h(
        'section',
        { class: 'fleet', 'aria-labelledby': `fleet-${entry.fleet_id}` },
        h('h2', { id: `fleet-${entry.fleet_id}` }, entry.name),
        h('ul', { class: 'members', 'aria-label': 'Members' }, ...entry.members.map((member) => h('li', {}, `${member.name} · ${member.coding_agent}${memberPaneState(member)}`))),
        h('h3', {}, "Director's inbox"),
        h(
          'ul',
          { class: 'inbox', 'aria-label': 'Inbox' },
          ...(inbox?.messages ?? []).map((message) =>
            h(
              'li',
              { class: message.status_state === 'input_required' ? 'unread' : 'read' },
              h('span', { class: 'from' }, `${names.get(message.from_member_id) ?? message.from_name ?? message.from_member_id}: `),
              h('span', { class: 'text' }, message.text),
              message.status_state === 'input_required'
                ? button('Ack', async () => {
                    try {
                      await api.post(`/api/fleet/${entry.fleet_id}/ack`, { message_id: message.message_id });
                      scheduleFleet();
                    } catch (error) {
                      status.textContent = failureText(error);
                    }
                  }, { disabled: state.config?.read_only ? 'drover web runs read-only' : null, name: `Ack message ${message.message_id}` })
                : h('span', { class: 'acked' }, ' ✓'),
            ),
          ),
        ),
        form,
      );
    }),
  );
}

function renderNotFound(address: string): void {
  replaceChildren(
    view,
    h('h1', {}, 'Not found'),
    h('p', {}, 'There is no page at ', h('code', {}, `#${address}`), '.'),
    h('p', {}, h('a', { href: '#/' }, 'Back to the home page')),
  );
}

/** How often the rows' ages are redrawn. */
const AGE_REFRESH_MS = 30_000;

// ---- start -------------------------------------------------------------------------------

function show(): void {
  const current = route();
  document.body.dataset.view = current.view;
  renderNav();
  if (current.view === 'home') renderHome();
  else if (current.view === 'spaces') renderSpaces();
  else if (current.view === 'pane') renderPane(current.paneKey);
  else if (current.view === 'not_found') renderNotFound(current.address);
  else {
    renderFleet();
    void loadFleet();
  }
}

async function boot(): Promise<void> {
  try {
    await api.get('/api/session');
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) return showPairing();
    replaceChildren(app, h('main', { class: 'view' }, h('h1', {}, 'drover web'), h('p', {}, failureText(error))));
    return;
  }
  state.config = await api.get<ConfigView>('/api/config');
  frame();
  listen();
  show();
  await loadSnapshot();
  await loadSessions();
  // "changed 3 min ago" ages while nothing else happens; only the words change, so focus stays put.
  window.setInterval(() => {
    for (const time of document.querySelectorAll<HTMLTimeElement>('.card time[datetime]')) time.textContent = `changed ${ago(time.dateTime)}`;
    // So does "last seen 2 min ago" over a host that cannot be reached.
    if ((state.snapshot?.hosts ?? []).some((host) => !host.reachable)) renderBanner();
  }, AGE_REFRESH_MS);
}

window.addEventListener('hashchange', () => {
  if (state.config !== null && document.getElementById('view') !== null) show();
});
void boot();
