/**
 * Quotes one word for a POSIX shell, only when it needs it. drover never runs shell strings
 * itself; this is for command lines it shows to users or installs into other tools' config.
 */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_\-./:@%+=,]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** An argv as one POSIX shell command line that runs exactly that argv. */
export function shellCommandLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}
