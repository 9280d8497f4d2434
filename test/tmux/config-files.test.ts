import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defaultConfigFiles, loadConfigFiles } from '../../src/tmux/index.js';
import { useTestServer } from '../support/tmux.js';

describe('defaultConfigFiles', () => {
  it('lists the files tmux loads without -f, in its order, each once and only those that exist', (t) => {
    const home = mkdtempSync(join(tmpdir(), 'drover-config-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    // Files tmux reads from the system come first wherever this runs.
    const system = existsSync('/etc/tmux.conf') ? ['/etc/tmux.conf'] : [];
    assert.deepEqual(defaultConfigFiles({ HOME: home }), system);
    writeFileSync(join(home, '.tmux.conf'), '');
    mkdirSync(join(home, '.config', 'tmux'), { recursive: true });
    writeFileSync(join(home, '.config', 'tmux', 'tmux.conf'), '');
    const both = [...system, join(home, '.tmux.conf'), join(home, '.config', 'tmux', 'tmux.conf')];
    assert.deepEqual(defaultConfigFiles({ HOME: home }), both);
    assert.deepEqual(defaultConfigFiles({ HOME: home, XDG_CONFIG_HOME: join(home, '.config') }), both, 'XDG_CONFIG_HOME naming ~/.config loads that file once');
    mkdirSync(join(home, 'xdg', 'tmux'), { recursive: true });
    symlinkSync(join(home, '.tmux.conf'), join(home, 'xdg', 'tmux', 'tmux.conf'));
    assert.deepEqual(defaultConfigFiles({ HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') }), both, 'a link to a file already listed is not listed again');
    rmSync(join(home, '.tmux.conf'));
    mkdirSync(join(home, '.tmux.conf'));
    assert.deepEqual(defaultConfigFiles({ HOME: home }), [...system, join(home, '.config', 'tmux', 'tmux.conf')], 'a directory is not a configuration file');
  });
});

describe('loadConfigFiles', () => {
  const context = useTestServer();

  it('reports a file tmux is still running at the deadline, and runs the next one', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-config-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'slow.conf'), 'set -g @slow-started yes\nrun-shell "sleep 5"\n');
    writeFileSync(join(dir, 'next.conf'), 'set -g @next ran\n');
    const loaded = await loadConfigFiles(context.server, [join(dir, 'slow.conf'), join(dir, 'next.conf')], { timeoutMs: 400 });
    assert.deepEqual(loaded.files, [join(dir, 'slow.conf'), join(dir, 'next.conf')]);
    assert.deepEqual(loaded.errors, [`${join(dir, 'slow.conf')}: tmux had not finished it after 400 ms; drover went on, and what tmux had not reached yet may not have run`]);
    const show = async (name: string): Promise<string> => (await context.server.run(['show-options', '-gqv', name])).text().trim();
    assert.deepEqual([await show('@slow-started'), await show('@next')], ['yes', 'ran']);
  });
});
