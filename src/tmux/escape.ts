/**
 * tmux reads some argument values through its format expander (names, start directories),
 * and splits argv into commands at any argument that ends in ";". These helpers make a
 * value arrive exactly as written.
 */

/** Protects a value that tmux will format-expand: "#" becomes "##". */
export function escapeFormat(value: string): string {
  return value.replaceAll('#', '##');
}

/**
 * Protects one argv element from tmux's command splitting: an argument ending in ";" ends
 * the command unless the ";" is preceded by a backslash, which tmux then removes.
 */
export function protectArgument(value: string): string {
  return value.endsWith(';') ? `${value.slice(0, -1)}\\;` : value;
}
