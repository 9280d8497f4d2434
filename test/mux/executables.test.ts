/**
 * Which tmux and zellij binary the mux port runs: DROVER_TMUX_BIN / DROVER_ZELLIJ_BIN, else the
 * probe (zellij at fixed paths, ~/.local/bin first; tmux on PATH, else fixed paths).
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fixedBinaryPaths, muxBinary, MuxSelectionError, openMux, selectMux, tmuxEndpointOf, withTmuxBinary } from '../../src/mux/index.js';
import { findExecutable } from '../../src/process/index.js';
import { Endpoint } from '../../src/tmux/index.js';

describe('the mux binaries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drover-bin-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const executable = (path: string): string => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '#!/bin/sh\nexit 0\n');
    chmodSync(path, 0o755);
    return path;
  };

  it('uses an override that is an absolute path to an executable', () => {
    const tmux = executable(join(dir, 'opt/tmux-3.6/bin/tmux'));
    assert.equal(muxBinary('tmux', { DROVER_TMUX_BIN: tmux, PATH: '' }), tmux);
    const zellij = executable(join(dir, 'opt/zellij'));
    assert.equal(muxBinary('zellij', { DROVER_ZELLIJ_BIN: ` ${zellij} `, HOME: dir, PATH: '' }), zellij);
  });

  it('refuses an override that is relative or not executable, naming the variable', () => {
    assert.throws(() => muxBinary('tmux', { DROVER_TMUX_BIN: 'bin/tmux' }), (error: unknown) => {
      assert.ok(error instanceof MuxSelectionError);
      assert.match(error.message, /^DROVER_TMUX_BIN="bin\/tmux" is not an absolute path/);
      return true;
    });
    const plain = join(dir, 'not-executable');
    writeFileSync(plain, '');
    assert.throws(() => muxBinary('zellij', { DROVER_ZELLIJ_BIN: plain }), /DROVER_ZELLIJ_BIN=".*not-executable" is not an executable file/);
    // Refused before anything opens: openMux throws rather than building an adapter.
    assert.throws(() => openMux(selectMux({ mux: 'zellij', env: {} }), { env: { DROVER_ZELLIJ_BIN: plain } }), MuxSelectionError);
  });

  it("probes zellij at ~/.local/bin before PATH, and tmux on PATH before the fixed paths", () => {
    const home = join(dir, 'home');
    const installed = executable(join(home, '.local/bin/zellij'));
    const onPath = executable(join(dir, 'path/zellij'));
    assert.equal(fixedBinaryPaths('zellij', { HOME: home })[0], installed);
    assert.equal(muxBinary('zellij', { HOME: home, PATH: join(dir, 'path') }), installed);
    const elsewhere = { HOME: join(dir, 'no-home'), PATH: join(dir, 'path') };
    const systemZellij = fixedBinaryPaths('zellij', elsewhere).map((path) => findExecutable(path)).find((path) => path !== undefined);
    assert.equal(muxBinary('zellij', elsewhere), systemZellij ?? onPath, 'PATH is the last resort');
    const tmuxOnPath = executable(join(dir, 'path/tmux'));
    assert.equal(muxBinary('tmux', { HOME: home, PATH: join(dir, 'path') }), tmuxOnPath);
    const fixedTmux = fixedBinaryPaths('tmux').map((path) => findExecutable(path)).find((path) => path !== undefined);
    if (fixedTmux !== undefined) assert.equal(muxBinary('tmux', { HOME: home, PATH: '' }), fixedTmux);
  });

  it('talks to the same tmux server through the chosen binary', () => {
    const tmux = executable(join(dir, 'other/tmux'));
    const env = { ...process.env, DROVER_TMUX_BIN: tmux, TMUX_TMPDIR: dir };
    const original = Endpoint.fromSocketName('work', { env: { ...env, DROVER_TMUX_BIN: '' } });
    const switched = withTmuxBinary(original, env);
    assert.deepEqual([switched.executable, switched.socketPath, switched.socketName], [tmux, original.socketPath, 'work']);
    assert.equal(tmuxEndpointOf({ mux: 'tmux', kind: 'socketPath', socketPath: join(dir, 'sock') }, env).executable, tmux);
    assert.equal(withTmuxBinary(original, { ...env, DROVER_TMUX_BIN: '' }), original);
    const unset = { ...env, DROVER_TMUX_BIN: '' };
    const ownBinary = Endpoint.fromSocketName('up', { env: unset, executable: executable(join(dir, 'up/tmux')) });
    assert.equal(withTmuxBinary(ownBinary, unset), ownBinary, 'without the override an endpoint keeps the binary it was resolved with');
  });
});
