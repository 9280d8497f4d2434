import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  DEFAULT_LINK_TIMINGS,
  SshUnavailableError,
  backoffDelay,
  classifySshExit,
  forwardedSocketProblem,
  hostEntry,
  parseHostTarget,
  remoteCommandLine,
  remoteInstallScript,
  remoteProgramProblem,
  sshArgv,
  sshBinary,
  sshDestinationProblem,
  sshStderrSummary,
} from '../../src/hosts/index.js';
import { ArgumentError, run } from '../../src/process/index.js';

describe('ssh destinations and remote commands', () => {
  it('refuses a destination ssh would take for an option, or one with blanks or control characters', () => {
    for (const fine of ['gpu', 'gpu-box', 'me@build.lan', 'build.example.com', '[::1]', 'host_2']) assert.equal(sshDestinationProblem(fine), undefined, fine);
    assert.match(sshDestinationProblem('-oProxyCommand=touch /tmp/x')!, /starts with "-", which ssh would take for an option/);
    assert.match(sshDestinationProblem('-p')!, /starts with "-"/);
    assert.match(sshDestinationProblem('gpu box')!, /whitespace/);
    assert.match(sshDestinationProblem('gpu\tbox')!, /control character/);
    assert.match(sshDestinationProblem('gpu\nProxyCommand x')!, /control character/);
    assert.match(sshDestinationProblem('gpu\u00a0box')!, /control character|whitespace/);
    assert.match(sshDestinationProblem('')!, /empty/);
    assert.match(sshDestinationProblem(undefined)!, /empty/);
    assert.throws(() => sshArgv('/usr/bin/ssh', '-oProxyCommand=x', 'drover rpc --stdio', { connectTimeoutMs: 10_000 }), SshUnavailableError);
  });

  it('runs ssh without a terminal, never asking, with keepalives, its own timeout, no shared master, and -- before the destination', () => {
    assert.deepEqual(sshArgv('/usr/bin/ssh', 'gpu', 'drover rpc --stdio', { connectTimeoutMs: 2500 }), [
      '/usr/bin/ssh',
      '-T',
      '-o',
      'BatchMode=yes',
      '-o',
      'ConnectTimeout=3',
      '-o',
      'ServerAliveInterval=15',
      '-o',
      'ServerAliveCountMax=4',
      '-o',
      'ControlMaster=no',
      '--',
      'gpu',
      'drover rpc --stdio',
    ]);
  });

  it("puts a local socket at an absolute path on the host for the session's life, replacing a stale one", () => {
    const argv = sshArgv('/usr/bin/ssh', 'gpu', 'drover rpc --stdio', { connectTimeoutMs: 1000, forwardSocket: { remote: '/home/me/hub.sock', local: '/run/hub/broker.sock' } });
    assert.deepEqual(argv.slice(argv.indexOf('ControlMaster=no') + 1), ['-o', 'StreamLocalBindUnlink=yes', '-R', '/home/me/hub.sock:/run/hub/broker.sock', '--', 'gpu', 'drover rpc --stdio']);
  });

  it('takes a forwarded socket path only when sshd can bind it as written', () => {
    const where = { name: 'n', ssh: 's', drover: 'd', forwardBroker: 'hosts.gpu.forward_broker' };
    assert.equal(hostEntry({ name: 'gpu', forwardBroker: '/home/me/hub.sock' }, where).forwardBroker, '/home/me/hub.sock');
    assert.throws(() => hostEntry({ name: 'gpu', forwardBroker: '~/hub.sock' }, where), { message: 'hosts.gpu.forward_broker: the socket path "~/hub.sock" is not an absolute path (sshd does not expand ~: write the home out)' });
    assert.match(forwardedSocketProblem('/a:b')!, /holds a colon/);
    assert.match(forwardedSocketProblem(`/${'x'.repeat(120)}`)!, /longer than a unix socket address holds/);
  });

  it('quotes the remote command for the login shell there, leaving a leading ~/ for that shell to expand', async () => {
    assert.equal(remoteCommandLine('drover', ['rpc', '--stdio']), 'drover rpc --stdio');
    assert.equal(remoteCommandLine('~/bin/drover', ['rpc', '--stdio']), '~/bin/drover rpc --stdio');
    assert.equal(remoteCommandLine('~/my tools/drover', ['rpc']), "~/'my tools/drover' rpc");
    assert.equal(remoteCommandLine('~bob/drover', []), "'~bob/drover'", 'only ~/ is expanded: another user’s home is not this drover’s to guess');
    // Through a real shell, as ssh hands it over: the words arrive intact, and ~/ is the home THERE.
    const home = mkdtempSync(join(tmpdir(), 'drover-remote-home-'));
    after(() => rmSync(home, { recursive: true, force: true }));
    const program = "~/it's a $HOME `id` drover";
    writeFileSync(join(home, "it's a $HOME `id` drover"), '#!/bin/sh\nprintf "%s\\n" "$0" "$@"\n', { mode: 0o755 });
    const line = remoteCommandLine(program, ['rpc', 'semi;colon', '$(touch pwned)', '--stdio']);
    const result = await run(['bash', '-c', line], { env: { HOME: home, PATH: '/usr/bin:/bin' }, cwd: home });
    assert.equal(result.exitCode, 0, result.stderrText());
    assert.deepEqual(result.text().trim().split('\n'), [join(home, "it's a $HOME `id` drover"), 'rpc', 'semi;colon', '$(touch pwned)', '--stdio']);
  });

  it('checks the drover program a host entry names', () => {
    assert.equal(remoteProgramProblem('~/bin/drover'), undefined);
    assert.equal(remoteProgramProblem('/opt/node/bin/drover'), undefined);
    assert.match(remoteProgramProblem('-e')!, /starts with "-"/);
    assert.match(remoteProgramProblem('drover\nrm -rf ~')!, /control character/);
    assert.match(remoteProgramProblem('  ')!, /empty/);
  });

  it('finds ssh on PATH, or takes DROVER_SSH_BIN only as an absolute path to an executable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-ssh-bin-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'ssh'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(dir, 'plain'), '', { mode: 0o644 });
    assert.equal(sshBinary({ PATH: dir }), join(dir, 'ssh'));
    assert.equal(sshBinary({ PATH: '/nowhere', DROVER_SSH_BIN: join(dir, 'ssh') }), join(dir, 'ssh'));
    assert.throws(() => sshBinary({ PATH: dir, DROVER_SSH_BIN: 'ssh' }), /DROVER_SSH_BIN="ssh" is not an absolute path/);
    assert.throws(() => sshBinary({ PATH: dir, DROVER_SSH_BIN: join(dir, 'plain') }), /is not an executable file/);
    assert.throws(() => sshBinary({ PATH: '/nowhere' }), /no ssh on PATH/);
  });
});

describe('judging how an ssh session ended', () => {
  it('calls a refused login auth only when ssh itself failed (255) saying so', () => {
    assert.equal(classifySshExit({ exitCode: 255, signal: null }, 'me@gpu: Permission denied (publickey).\n'), 'auth');
    assert.equal(classifySshExit({ exitCode: 255, signal: null }, 'No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.\n'), 'auth');
    assert.equal(classifySshExit({ exitCode: 255, signal: null }, '@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\n'), 'auth');
    assert.equal(classifySshExit({ exitCode: 255, signal: null }, 'ssh: connect to host gpu port 22: Connection refused\n'), 'transient');
    assert.equal(classifySshExit({ exitCode: 1, signal: null }, 'Permission denied: ./data\n'), 'exited', 'the remote program’s own words are not ssh’s');
    assert.equal(classifySshExit({ exitCode: 127, signal: null }, 'bash: line 1: drover: command not found\n'), 'missing');
    assert.equal(classifySshExit({ exitCode: 126, signal: null }, 'bash: ~/bin/drover: Permission denied\n'), 'missing');
    assert.equal(classifySshExit({ exitCode: null, signal: 'SIGTERM' }, ''), 'transient', 'ssh stopped by drover');
    assert.equal(classifySshExit(undefined, ''), 'transient', 'ssh still running when judged');
  });

  it('summarises stderr by the line that says most', () => {
    assert.equal(sshStderrSummary("Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to the list of known hosts.\r\nme@gpu: Permission denied (publickey).\r\n"), 'me@gpu: Permission denied (publickey).');
    assert.equal(sshStderrSummary('No ED25519 host key is known for gpu and you have requested strict checking.\nHost key verification failed.\n'), 'No ED25519 host key is known for gpu and you have requested strict checking.');
    assert.equal(sshStderrSummary('banner\nConnection closed by 127.0.0.1 port 2222\n'), 'Connection closed by 127.0.0.1 port 2222');
    assert.equal(sshStderrSummary('\n\n'), undefined);
  });
});

describe('reconnect backoff', () => {
  it('doubles from the base, is jittered by ±20 %, and never passes the cap', () => {
    const timings = { backoffBaseMs: 1000, backoffCapMs: 60_000 };
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8].map((failures) => backoffDelay(failures, timings, 0.5)), [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    assert.equal(backoffDelay(1, timings, 0), 800);
    assert.equal(backoffDelay(1, timings, 0.999_999), 1200);
    assert.equal(backoffDelay(6, timings, 0.999_999), 38_400);
    assert.equal(backoffDelay(7, timings, 0), 51_200);
    assert.equal(backoffDelay(1000, timings, 0.999_999), 60_000);
    assert.ok(DEFAULT_LINK_TIMINGS.backoffCapMs === 60_000 && DEFAULT_LINK_TIMINGS.pingIntervalMs + DEFAULT_LINK_TIMINGS.pingTimeoutMs < 60_000, 'a stalled link is found before ssh’s own keepalive gives up (60 s)');
  });
});

describe('the remote install script', () => {
  it('installs the tarball it is sent from a temporary directory it removes, and says where drover landed', async () => {
    const script = remoteInstallScript('drover-0.1.0.tgz');
    assert.match(script, /^set -e$/m);
    assert.match(script, /npm install --global --no-audit --no-fund "\$dir\/drover-0\.1\.0\.tgz"/);
    assert.doesNotMatch(script, /npm install[^\n]* drover(@|\s|$)/, 'never the registry’s package of that name');
    assert.throws(() => remoteInstallScript('x"; rm -rf ~; ".tgz'), /not a tarball name/);
    // Run by a real shell with a stand-in npm: the tarball reaches npm byte for byte, and the temporary directory goes.
    const dir = mkdtempSync(join(tmpdir(), 'drover-install-script-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'npm'), `#!/bin/sh\ncase "$1" in\n  install) cp "$5" '${dir}/received'; echo "$(dirname "$5")" > '${dir}/tmpdir' ;;\n  prefix) echo /opt/npm ;;\nesac\n`, { mode: 0o755 });
    const result = await run(['sh', '-c', script], { input: 'tarball bytes', env: { PATH: `${dir}:/usr/bin:/bin`, TMPDIR: dir } });
    assert.equal(result.exitCode, 0, result.stderrText());
    assert.equal(result.text(), 'drover-installed: /opt/npm/bin/drover\ndrover-on-path: \n');
    assert.equal(readFileSync(join(dir, 'received'), 'utf8'), 'tarball bytes');
    assert.equal(existsSync(readFileSync(join(dir, 'tmpdir'), 'utf8').trim()), false, 'the temporary directory is removed');
  });
});

describe('pane targets on a host', () => {
  it('reads HOST::PANE, leaves tmux targets alone, and names a malformed host part', () => {
    assert.deepEqual(parseHostTarget('gpu::%3'), { host: 'gpu', pane: '%3' });
    assert.deepEqual(parseHostTarget('gpu::work:0.1'), { host: 'gpu', pane: 'work:0.1' }, 'a tmux target there');
    assert.deepEqual(parseHostTarget('LOCAL::%0'), { host: 'local', pane: '%0' });
    assert.equal(parseHostTarget('%3'), undefined);
    assert.equal(parseHostTarget('work:0.1'), undefined, 'a tmux target here has one colon');
    assert.throws(() => parseHostTarget('-o::%3'), /"-o" is not a host name/);
    assert.throws(() => parseHostTarget('::%3'), /"" is not a host name/);
    assert.throws(() => parseHostTarget('gpu::'), /names no pane after ::/);
  });

  it('reads a full pane key: its host, and the key as that host spells it (local)', () => {
    assert.deepEqual(parseHostTarget('gpu::tmux::28114-1764844800::%3'), { host: 'gpu', pane: 'local::tmux::28114-1764844800::%3' });
    assert.deepEqual(parseHostTarget('local::tmux::abc::%3'), { host: 'local', pane: 'local::tmux::abc::%3' }, 'this machine’s key, as it is');
    assert.deepEqual(parseHostTarget('LOCAL::tmux::abc::%3'), { host: 'local', pane: 'local::tmux::abc::%3' });
    assert.deepEqual(parseHostTarget('gpu::herdr::run-2::w1:p3'), { host: 'gpu', pane: 'local::herdr::run-2::w1:p3' }, 'a pane id with a colon survives');
  });

  it('names what is wrong with a malformed pane key', () => {
    assert.throws(() => parseHostTarget('gpu::screen::abc::%3'), (error: Error) => error instanceof ArgumentError && /"screen" is not a multiplexer drover drives/.test(error.message));
    assert.throws(() => parseHostTarget('gpu::tmux::a b::%3'), /"a b" is not an incarnation/);
    assert.throws(() => parseHostTarget('-o::tmux::abc::%3'), /"-o" is not a host name/);
    assert.throws(() => parseHostTarget('gpu::tmux::abc::'), /"" is not a pane id/);
    assert.throws(() => parseHostTarget('gpu::tmux::%3'), /neither HOST::PANE .* nor a pane key HOST::MUX::INCARNATION::PANE/);
  });
});
