/** Shells that can own a pane's foreground before (or after) an agent runs in it. */
export const SHELL_NAMES: readonly string[] = Object.freeze(['sh', 'bash', 'zsh', 'fish', 'dash', 'ksh', 'tcsh', 'csh', 'nu']);

const shells = new Set(SHELL_NAMES);

/** Whether a command name or path is a known shell (a login shell's leading "-" ignored). */
export function isShellCommand(command: string): boolean {
  const base = command.trim().split('/').pop() ?? '';
  return shells.has(base.startsWith('-') ? base.slice(1) : base);
}

/** The shell a plain-shell pane runs: the user's login shell ($SHELL), else /bin/sh. */
export function userShell(env: NodeJS.ProcessEnv = process.env): string {
  return env.SHELL || '/bin/sh';
}
