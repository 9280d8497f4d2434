import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseProcStat } from './proc-stat.js';

/**
 * System calls in which a thread reads nothing, by number, per architecture: a sleep, or a wait
 * for a child. A thread in any other call (read, poll, epoll_wait, select) may be reading its
 * terminal, and one that is running may read it next.
 */
const NON_READING_CALLS: Readonly<Partial<Record<NodeJS.Architecture, Readonly<Record<number, string>>>>> = Object.freeze({
  x64: Object.freeze({ 35: 'nanosleep', 61: 'wait4', 230: 'clock_nanosleep', 247: 'waitid' }),
  arm64: Object.freeze({ 95: 'waitid', 101: 'nanosleep', 115: 'clock_nanosleep', 260: 'wait4' }),
});

interface ProcStat {
  readonly group: number;
  readonly terminalGroup: number;
}

async function procStat(procRoot: string, pid: string): Promise<ProcStat | undefined> {
  let stat: string;
  try {
    stat = await readFile(join(procRoot, pid, 'stat'), 'utf8');
  } catch {
    return undefined;
  }
  const { fields } = parseProcStat(stat);
  return { group: Number(fields[2]), terminalGroup: Number(fields[5]) };
}

/**
 * Whether the process group in the foreground of `pid`'s terminal reads nothing right now: every
 * thread of every process in it waits in a sleep or for a child (`sleep 8` run from a shell, a
 * script waiting on it). Text typed there is echoed by the terminal and only read once the group
 * ends, by whatever comes next (the shell, which runs it as a command). The calls they wait in,
 * by name; undefined whenever that cannot be told for certain: a thread running or in any other
 * call, a process whose calls this user may not read (Yama's ptrace scope keeps them from all but
 * root and a process's ancestors), an architecture without a table here, or no Linux /proc.
 */
export async function foregroundWait(pid: number, options: { procRoot?: string; arch?: NodeJS.Architecture } = {}): Promise<readonly string[] | undefined> {
  const procRoot = options.procRoot ?? '/proc';
  const calls = NON_READING_CALLS[options.arch ?? process.arch];
  if (calls === undefined) return undefined;
  const terminalGroup = (await procStat(procRoot, String(pid)))?.terminalGroup;
  if (terminalGroup === undefined || !(terminalGroup > 0)) return undefined;
  let entries: string[];
  try {
    entries = await readdir(procRoot);
  } catch {
    return undefined;
  }
  // Every member of the group, not only the pane's descendants: a job whose parent exited is
  // still in the foreground and may read the terminal.
  const numbered = entries.filter((entry) => /^\d+$/.test(entry));
  const stats = await Promise.all(numbered.map((entry) => procStat(procRoot, entry)));
  const members = numbered.filter((_, index) => stats[index]?.group === terminalGroup);
  if (members.length === 0) return undefined;
  const waits = new Set<string>();
  for (const member of members) {
    let tasks: string[];
    try {
      tasks = await readdir(join(procRoot, member, 'task'));
    } catch {
      return undefined;
    }
    for (const task of tasks) {
      let line: string;
      try {
        line = await readFile(join(procRoot, member, 'task', task, 'syscall'), 'utf8');
      } catch {
        return undefined;
      }
      // "NR arg1 … arg6 sp pc" while blocked in a call; "running", or -1 outside one.
      const call = calls[Number(line.split(' ')[0])];
      if (call === undefined) return undefined;
      waits.add(call);
    }
  }
  return [...waits].sort();
}
