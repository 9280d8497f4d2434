import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { LATEST_SQLITE_SCHEMA_VERSION, SqliteStore } from '../../src/fleet/index.js';
import { findExecutable, type RunResult } from '../../src/process/index.js';
import { seed } from '../mux/tmux-world.js';
import { cliSandbox } from '../support/cli.js';
import { useTestServer } from '../support/tmux.js';

interface DoctorDocument {
  ok: boolean;
  issues: string[];
  multiplexer: { backend: string | null; chosen_by: string | null; endpoint: Record<string, string | null> | null; tmux_version: string | null; reachable: boolean };
  tools: Record<string, string | null>;
  hosts: { config_path: string | null; names: string[] };
  agents: Record<string, { command: string | null; program: string | null; through_shell: boolean; hooks: string; hooks_config: string }>;
  fleet: { store: Record<string, unknown>; backend: { resolved: string | null }; problems: string[] };
  checks: { section: string; check: string; ok: boolean; detail: string }[];
}

function doctorJson(result: RunResult, code: number): DoctorDocument {
  assert.equal(result.exitCode, code, `exit ${result.exitCode}: ${result.stderrText()}${result.text()}`);
  return JSON.parse(result.text()) as DoctorDocument;
}

describe('drover doctor inside a tmux session', () => {
  const sandbox = cliSandbox();
  const owned = useTestServer();
  let tmuxEnv: NodeJS.ProcessEnv;
  before(async () => {
    await seed(owned.server);
    tmuxEnv = { TMUX: `${owned.server.endpoint.socketPath},1,0` };
  });

  it('reports every section healthy before the fleet database exists', async () => {
    const text = await sandbox.drover(['doctor'], { env: tmuxEnv });
    assert.equal(text.exitCode, 0, text.text());
    const socket = owned.server.endpoint.socketPath;
    assert.deepEqual(text.text().split('\n').slice(0, 5), [
      'multiplexer',
      '  ✓ backend: tmux (chosen by TMUX)',
      `  ✓ endpoint: tmux -S ${socket} (from $TMUX)`,
      `  ✓ tmux version: ${(await owned.server.run(['display-message', '-p', 'tmux #{version}'])).text().trim()}`,
      '  ✓ reachable: 2 spaces, 4 panes',
    ]);
    assert.match(text.text(), /\ntools\n {2}✓ tmux: \/\S+\/tmux\n {2}✓ git: \/\S+\/git\nagents\n/);
    assert.match(text.text(), new RegExp(`\n {2}✓ store: sqlite ${join(sandbox.dir, 'drover.db')} \\(not created yet; chosen by DROVER_DB\\)\n`));
    assert.match(text.text(), /\n {2}✓ fleet backend: tmux\n/);
    assert.match(text.text(), /\nno issues found\n$/);
    assert.doesNotMatch(text.text(), /✗/);
  });

  it('reads the schema of an existing fleet database, and judges the server -S names the same way', async () => {
    SqliteStore.open({ path: join(sandbox.dir, 'drover.db') }).db.close();
    const document = doctorJson(await sandbox.drover(['-S', owned.server.endpoint.socketPath, 'doctor', '--json']), 0);
    assert.deepEqual([document.ok, document.issues], [true, []]);
    assert.deepEqual([document.multiplexer.backend, document.multiplexer.chosen_by, document.multiplexer.reachable], ['tmux', '-S', true]);
    assert.match(document.multiplexer.tmux_version!, /^tmux \d/);
    assert.deepEqual(document.fleet.store, {
      kind: 'sqlite',
      location: join(sandbox.dir, 'drover.db'),
      chosen_by: 'DROVER_DB',
      reachable: true,
      schema_version: LATEST_SQLITE_SCHEMA_VERSION,
      latest_schema_version: LATEST_SQLITE_SCHEMA_VERSION,
      listens: null,
    });
    assert.equal(document.fleet.backend.resolved, 'tmux');
    assert.ok(document.checks.some((check) => check.check === 'store' && check.detail.endsWith(`(schema ${LATEST_SQLITE_SCHEMA_VERSION} of ${LATEST_SQLITE_SCHEMA_VERSION}; chosen by DROVER_DB)`)));
  });

  it('counts a server that does not answer as an issue', async () => {
    const dead = join(sandbox.dir, 'no-server.sock');
    const text = await sandbox.drover(['doctor'], { env: { TMUX: `${dead},1,0` } });
    assert.equal(text.exitCode, 1);
    assert.match(text.text(), new RegExp(`\n {2}✗ reachable: tmux is not reachable at tmux -S ${dead} \\(from \\$TMUX\\): .+\n`));
    assert.match(text.text(), /\n1 issue found\n$/);
  });
});

describe('drover doctor with nothing set up', () => {
  const sandbox = cliSandbox();

  it('outside any session looks for tmux by the one endpoint rule, and says how to start a server', async () => {
    const text = await sandbox.drover(['doctor']);
    assert.equal(text.exitCode, 1);
    assert.match(text.text(), /^multiplexer\n {2}✓ backend: tmux \(chosen by default\)\n {2}✓ endpoint: tmux -L default \(from tmux's default socket\)\n/);
    assert.match(text.text(), /\n {2}✗ reachable: tmux is not reachable at tmux -L default \(from tmux's default socket\): .+; start one with `.*drover(\.js)? up` or name one with -L\/-S\n/);
    assert.match(text.text(), /\n1 issue found\n$/);
    const document = doctorJson(await sandbox.drover(['doctor', '--json']), 1);
    assert.deepEqual([document.multiplexer.backend, document.multiplexer.chosen_by, document.multiplexer.reachable], ['tmux', 'default', false]);
    assert.equal(document.issues.length, 1);
  });

  it('finds the server drover up started, as every command does', async () => {
    const up = await sandbox.drover(['up', '--json']);
    try {
      assert.equal(up.exitCode, 0, up.stderrText());
      const socket = (JSON.parse(up.text()) as { socket_path: string }).socket_path;
      const document = doctorJson(await sandbox.drover(['doctor', '--json']), 0);
      assert.deepEqual([document.multiplexer.backend, document.multiplexer.reachable], ['tmux', true]);
      assert.deepEqual([document.multiplexer.endpoint?.socket_path, document.multiplexer.endpoint?.source], [socket, 'the server drover up started']);
      assert.equal(document.fleet.backend.resolved, 'tmux');
    } finally {
      await sandbox.drover(['down']);
    }
  });

  it('reports an ambiguous environment once, with its remedy, and does not crash', async () => {
    const env = { TMUX: join(sandbox.dir, 'none.sock'), HERDR_ENV: '1' };
    const text = await sandbox.drover(['doctor'], { env });
    assert.equal(text.exitCode, 1);
    assert.match(text.text(), /^multiplexer\n {2}✗ backend: .*DROVER_MUX.*\ntools\n/);
    const document = doctorJson(await sandbox.drover(['doctor', '--json'], { env }), 1);
    assert.deepEqual(document.multiplexer, { backend: null, chosen_by: null, endpoint: null, tmux_version: null, reachable: false });
  });

  it('lists every missing tool and an unusable database, one issue each', async () => {
    const database = join(sandbox.dir, 'other.db');
    const db = new Database(database);
    db.exec('CREATE TABLE other (x)');
    db.close();
    const emptyPath = join(sandbox.dir, 'empty-bin');
    mkdirSync(emptyPath);
    const document = doctorJson(await sandbox.drover(['doctor', '--json'], { env: { PATH: emptyPath, DROVER_DB: database, DROVER_MUX: 'herdr', HERDR_SOCKET_PATH: join(sandbox.dir, 'none.sock') } }), 1);
    assert.deepEqual(document.tools, { tmux: null, git: null });
    assert.deepEqual(
      document.checks.filter((check) => !check.ok).map((check) => [check.section, check.check]),
      [
        ['multiplexer', 'reachable'],
        ['tools', 'tmux'],
        ['tools', 'git'],
        ['fleet', 'problem'],
      ],
    );
    assert.equal(document.issues.length, 4);
    assert.ok(document.issues.includes(`the database ${database} has no schema_migrations ledger; drover will not use it`));
    assert.match(document.issues[0]!, /^herdr is not reachable at herdr socket \S+none\.sock \(from HERDR_SOCKET_PATH\): cannot connect to herdr/);
  });
});

describe('drover doctor on the agents', () => {
  const sandbox = cliSandbox();
  const owned = useTestServer();

  it('says where each agent is found and whether its state hooks are set up; only an unreadable configuration is an issue', async () => {
    // Two agents on PATH (claude with drover's hooks, codex without), gemini's settings broken, opencode nowhere.
    const bin = join(sandbox.dir, 'agents-bin');
    mkdirSync(bin);
    for (const name of ['claude', 'codex']) {
      writeFileSync(join(bin, name), '#!/bin/sh\nexit 0\n');
      chmodSync(join(bin, name), 0o755);
    }
    // tmux and git beside them, so that nothing else on this machine's PATH is seen.
    symlinkSync(owned.server.endpoint.executable, join(bin, 'tmux'));
    symlinkSync(findExecutable('git', process.env)!, join(bin, 'git'));
    const env = { PATH: bin, HOME: join(sandbox.dir, 'home') };
    mkdirSync(join(env.HOME, '.gemini'), { recursive: true });
    writeFileSync(join(env.HOME, '.gemini', 'settings.json'), '{"hooks": ');
    assert.equal((await sandbox.drover(['agent', 'setup', '--agent', 'claude', '--yes'], { env })).exitCode, 0);
    const socket = owned.server.endpoint.socketPath;

    const document = doctorJson(await sandbox.drover(['-S', socket, 'doctor', '--json'], { env }), 1);
    assert.deepEqual(document.agents.claude, {
      command: 'claude --model opus --effort high',
      program: join(bin, 'claude'),
      through_shell: false,
      hooks: 'installed',
      hooks_config: join(env.HOME, '.claude', 'settings.json'),
    });
    assert.deepEqual([document.agents.codex?.program, document.agents.codex?.hooks], [join(bin, 'codex'), 'absent']);
    assert.deepEqual([document.agents.gemini?.program, document.agents.gemini?.hooks], [null, 'unreadable']);
    assert.deepEqual([document.agents.opencode?.program, document.agents.opencode?.hooks], [null, 'absent']);
    assert.equal(document.issues.length, 1, document.issues.join('\n'));
    assert.match(document.issues[0]!, new RegExp(`^gemini: its configuration cannot be read: ${join(env.HOME, '.gemini', 'settings.json')} is not valid JSON`));

    const text = await sandbox.drover(['-S', socket, 'doctor'], { env });
    assert.equal(text.exitCode, 1);
    const agents = text.text().slice(text.text().indexOf('\nagents\n') + 1, text.text().indexOf('\nhosts\n')).split('\n');
    assert.equal(agents.length, 5, agents.join('\n'));
    assert.equal(agents[1], `  ✓ claude: ${join(bin, 'claude')}; state hooks in ${join(env.HOME, '.claude', 'settings.json')}`);
    assert.match(agents[2]!, new RegExp(`^ {2}✓ codex: ${join(bin, 'codex')}; no state hooks of this drover in ${join(env.HOME, '.codex', 'config.toml')} \\(\`.+ agent setup --agent codex\` adds them; until then its state is read off its screen\\)$`));
    assert.match(agents[3]!, /^ {2}✗ gemini: its configuration cannot be read: /);
    assert.equal(agents[4], '  · opencode: not on PATH');
    assert.match(text.text(), /\n1 issue found\n$/);
  });

  it('lists the hosts of drover’s config file without opening their links, and reports a broken file once per reader, on one line each', async () => {
    const config = join(sandbox.dir, 'hosts-config.yaml');
    const env = { DROVER_CONFIG: config };
    const socket = owned.server.endpoint.socketPath;
    const hostsOf = async (): Promise<{ lines: string[]; document: DoctorDocument }> => {
      const text = (await sandbox.drover(['-S', socket, 'doctor'], { env })).text();
      const document = JSON.parse((await sandbox.drover(['-S', socket, 'doctor', '--json'], { env })).text()) as DoctorDocument;
      return { lines: text.slice(text.indexOf('\nhosts\n') + 1, text.indexOf('\nfleet\n')).split('\n'), document };
    };

    const none = await hostsOf();
    assert.deepEqual(none.lines, ['hosts', `  · config: no hosts in ${config}`]);
    assert.deepEqual(none.document.hosts, { config_path: config, names: [] });

    // Hosts whose ssh aliases resolve nowhere: doctor only reads the file, so it answers at once.
    writeFileSync(config, 'hosts:\n  gpu:\n    ssh: gpu-box.invalid\n  build:\n    ssh: me@build.invalid\n');
    const two = await hostsOf();
    assert.match(two.lines[1]!, new RegExp(`^ {2}✓ config: 2 hosts in ${config} \\(gpu, build\\); \`.+ host check\` opens their links$`));
    assert.deepEqual(two.document.hosts, { config_path: config, names: ['gpu', 'build'] });

    writeFileSync(config, 'hosts:\n  gpu:\n    ssh: gpu-box.invalid\nhosts: [\n');
    const broken = await hostsOf();
    const problem = `${config}:4:1: not valid YAML: Map keys must be unique at line 4, column 1:`;
    assert.deepEqual(broken.lines, ['hosts', `  ✗ config: ${problem}`]);
    // The fleet reads its store's URL from the same file: the same words, one line.
    assert.deepEqual(broken.document.issues, [problem, `the fleet store cannot be inspected: ${problem}`]);
    assert.deepEqual(broken.document.hosts, { config_path: config, names: [] }, 'the file to fix is named');
  });
});
