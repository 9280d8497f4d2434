/** A C0 control or DEL as a visible escape, e.g. `\x1B`. */
export function hexEscape(char: string): string {
  return `\\x${char.codePointAt(0)!.toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * Folds text onto one printable line: CRLF, LF and CR become ⏎, a tab becomes ␉ and every
 * other C0 control or DEL becomes a visible `\xNN` escape, so text another program chose
 * (a message body, a window or member name) can never move the cursor or recolour the
 * terminal it is printed on. Everything else stays as is.
 */
export function foldBody(text: string): string {
  return text.replace(/\r\n|[\r\n]/gu, '⏎').replace(/\t/gu, '␉').replace(/[\u0000-\u001f\u007f]/gu, hexEscape);
}
