import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  declareCapabilities,
  describeEndpoint,
  HERDR_DECLARATION,
  MUX_CAPABILITIES,
  MUX_DECLARATIONS,
  MuxSelectionError,
  resolveEndpoint,
  selectMux,
  TMUX_DECLARATION,
  ZELLIJ_DECLARATION,
  zellijDeclaration,
} from '../../src/mux/index.js';

const HOME = { HOME: '/home/op' };

describe('backend selection', () => {
  const table: [Record<string, string>, string][] = [
    [{ DROVER_MUX: 'tmux', HERDR_ENV: '1', TMUX: '/tmp/s,1,0' }, 'tmux/DROVER_MUX'],
    [{ DROVER_MUX: 'herdr', TMUX: '/tmp/s,1,0' }, 'herdr/DROVER_MUX'],
    [{ DROVER_MUX: 'zellij' }, 'zellij/DROVER_MUX'],
    [{ HERDR_ENV: '1' }, 'herdr/HERDR_ENV'],
    [{ HERDR_ENV: 'true', TMUX: '' }, 'herdr/HERDR_ENV'],
    [{ TMUX: '/tmp/s,1,0' }, 'tmux/TMUX'],
    [{ HERDR_ENV: '0', TMUX: '/tmp/s,1,0' }, 'tmux/TMUX'],
    [{ HERDR_ENV: 'false', TMUX: '/tmp/s,1,0' }, 'tmux/TMUX'],
  ];
  for (const [env, expected] of table) {
    it(`${JSON.stringify(env)} chooses ${expected}`, () => {
      const selection = selectMux({ env: { ...HOME, ...env } });
      assert.equal(`${selection.mux}/${selection.chosenBy}`, expected);
    });
  }

  it('lets a --mux flag win over DROVER_MUX and the environment', () => {
    const selection = selectMux({ mux: 'zellij', env: { ...HOME, DROVER_MUX: 'tmux', TMUX: '/x,1,0' } });
    assert.equal(selection.mux, 'zellij');
    assert.equal(selection.chosenBy, 'flag');
  });

  it('fails loudly on an unknown name, listing the valid ones', () => {
    assert.throws(() => selectMux({ env: { DROVER_MUX: 'screen' } }), (error: unknown) => {
      assert.ok(error instanceof MuxSelectionError);
      assert.equal(error.message, 'DROVER_MUX="screen" names no multiplexer drover supports; valid names: tmux, herdr, zellij');
      return true;
    });
    assert.throws(() => selectMux({ mux: 'Tmux', env: {} }), /--mux="Tmux" names no multiplexer drover supports; valid names: tmux, herdr, zellij/);
  });

  it('refuses both and neither with the remedy', () => {
    assert.throws(() => selectMux({ env: { HERDR_ENV: '1', TMUX: '/tmp/s,1,0' } }), /^MuxSelectionError: both HERDR_ENV and TMUX are set; set DROVER_MUX to disambiguate$/);
    assert.throws(() => selectMux({ env: {} }), /^MuxSelectionError: run drover inside a tmux or herdr session, or set DROVER_MUX$/);
    assert.throws(() => selectMux({ env: { HERDR_ENV: 'no' } }), /run drover inside a tmux or herdr session/);
  });

  it('reads the tmux endpoint as -L without a slash and -S with one', () => {
    assert.deepEqual(resolveEndpoint('tmux', { DROVER_MUX_ENDPOINT_TMUX: 'work' }), { mux: 'tmux', kind: 'socketName', socketName: 'work' });
    assert.deepEqual(resolveEndpoint('tmux', { DROVER_MUX_ENDPOINT_TMUX: '/run/t.sock' }), { mux: 'tmux', kind: 'socketPath', socketPath: '/run/t.sock' });
    assert.deepEqual(resolveEndpoint('tmux', { TMUX: '/tmp/other,1,0' }), { mux: 'tmux', kind: 'environment' });
    assert.equal(describeEndpoint(resolveEndpoint('tmux', { DROVER_MUX_ENDPOINT_TMUX: 'work' })), 'tmux -L work');
  });

  it('reads the herdr endpoint from drover, then herdr, then the default socket', () => {
    assert.deepEqual(resolveEndpoint('herdr', { ...HOME, DROVER_MUX_ENDPOINT_HERDR: '/a.sock', HERDR_SOCKET_PATH: '/b.sock' }), {
      mux: 'herdr',
      socketPath: '/a.sock',
      source: 'DROVER_MUX_ENDPOINT_HERDR',
    });
    assert.deepEqual(resolveEndpoint('herdr', { ...HOME, HERDR_SOCKET_PATH: '/b.sock' }), { mux: 'herdr', socketPath: '/b.sock', source: 'HERDR_SOCKET_PATH' });
    assert.deepEqual(resolveEndpoint('herdr', { ...HOME, HERDR_SESSION: 'review' }), {
      mux: 'herdr',
      socketPath: '/home/op/.config/herdr/sessions/review/herdr.sock',
      source: 'HERDR_SESSION',
    });
    assert.deepEqual(resolveEndpoint('herdr', { ...HOME, XDG_CONFIG_HOME: '/cfg' }), { mux: 'herdr', socketPath: '/cfg/herdr/herdr.sock', source: 'default' });
    assert.throws(() => resolveEndpoint('herdr', { ...HOME, HERDR_SESSION: '../x' }), /HERDR_SESSION="..\/x" is not a herdr session name/);
  });

  it('reads the zellij endpoint as a session name, empty meaning the single running one', () => {
    assert.deepEqual(resolveEndpoint('zellij', { DROVER_MUX_ENDPOINT_ZELLIJ: ' work ' }), { mux: 'zellij', session: 'work' });
    assert.deepEqual(resolveEndpoint('zellij', {}), { mux: 'zellij', session: undefined });
  });

  it('summarises the choice for drover doctor', () => {
    assert.equal(selectMux({ env: { ...HOME, DROVER_MUX: 'herdr', HERDR_SOCKET_PATH: '/b.sock' } }).summary, 'herdr (chosen by DROVER_MUX) at herdr socket /b.sock (from HERDR_SOCKET_PATH)');
  });
});

describe('capability declarations', () => {
  it('answers every capability for every adapter', () => {
    for (const declaration of Object.values(MUX_DECLARATIONS)) {
      assert.deepEqual(Object.keys(declaration.supports).sort(), [...MUX_CAPABILITIES].sort());
      assert.ok(Object.values(declaration.supports).every((value) => typeof value === 'boolean'));
    }
  });

  it('declares what each multiplexer can do', () => {
    assert.equal(HERDR_DECLARATION.supports.agentDetection, true);
    assert.equal(HERDR_DECLARATION.supports.listSessions, true);
    assert.deepEqual(HERDR_DECLARATION.topologyLatency, { kind: 'push' });
    assert.equal(TMUX_DECLARATION.supports.agentDetection, false);
    assert.equal(TMUX_DECLARATION.supports.listWorktrees, false);
    assert.equal(TMUX_DECLARATION.supports.setFocus, true);
    assert.equal(ZELLIJ_DECLARATION.supports.setFocus, false);
    assert.equal(ZELLIJ_DECLARATION.supports.createSpace, false);
    assert.equal(ZELLIJ_DECLARATION.supports.pushTopologyEvents, false);
    assert.equal(ZELLIJ_DECLARATION.spaces, 'one');
    assert.deepEqual(ZELLIJ_DECLARATION.topologyLatency, { kind: 'bounded', ms: 12_000 });
    assert.deepEqual(zellijDeclaration(400).topologyLatency, { kind: 'bounded', ms: 400 });
  });

  it('fails closed and refuses a non-positive bound', () => {
    const declaration = declareCapabilities(['typeText'], { topologyLatency: { kind: 'push' }, spaces: 'many' });
    assert.equal(declaration.supports.typeText, true);
    assert.equal(declaration.supports.sendKeys, false);
    assert.throws(() => declareCapabilities([], { topologyLatency: { kind: 'bounded', ms: 0 }, spaces: 'one' }), RangeError);
  });
});
