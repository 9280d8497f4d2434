import { readFile } from 'node:fs/promises';
import { parseProcStat } from './proc-stat.js';

/**
 * The exit status of a child that has exited but not been reaped yet (a zombie), read from
 * Linux's /proc: a zombie keeps its pid and the wait status it will hand its parent. Null when
 * the process is not a zombie, ended by a signal, already reaped, or /proc is not there.
 */
export async function zombieExitStatus(pid: number): Promise<number | null> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const { fields } = parseProcStat(stat);
  // fields[0] is the state (stat's field 3); the wait status is field 52.
  if (fields[0] !== 'Z') return null;
  const waitStatus = Number(fields[49]);
  if (!Number.isInteger(waitStatus) || (waitStatus & 0x7f) !== 0) return null;
  return (waitStatus >> 8) & 0xff;
}
