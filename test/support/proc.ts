import { readdirSync, readFileSync } from 'node:fs';

/** Pids whose parent is this process, read from /proc (zombies included). */
export function childPids(): number[] {
  const mine = String(process.pid);
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

export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}
