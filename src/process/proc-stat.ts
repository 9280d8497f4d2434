/**
 * Linux's /proc/PID/stat, split into the process's name and the fields after it: state first,
 * then ppid, pgrp, session, tty_nr, tpgid, … The name sits in parentheses and may itself hold
 * spaces and ") ", so it ends at the last ")".
 */
export function parseProcStat(stat: string): { name: string; fields: string[] } {
  const nameEnd = stat.lastIndexOf(')');
  return { name: stat.slice(stat.indexOf('(') + 1, nameEnd), fields: stat.slice(nameEnd + 2).trim().split(' ') };
}
