import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Pids whose parent is `parent` (this process by default), read from /proc (zombies included). */
export function childPids(parent = process.pid): number[] {
  const mine = String(parent);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[1] === mine) pids.push(Number(entry));
    } catch {
      // exited while listing
    }
  }
  return pids;
}

/** The paths a process has open, read from /proc (empty once it is gone). */
export function openPaths(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        return [readlinkSync(`/proc/${pid}/fd/${fd}`)];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** A process's argv, read from /proc (empty once it is gone). */
export function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '');
  } catch {
    return [];
  }
}

/** Pids of the live (not zombie) processes in process group `pgid`, read from /proc. */
export function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z' && fields[2] === String(pgid)) pids.push(Number(entry));
    } catch {
      // exited while listing
    }
  }
  return pids;
}
