/** Quotes a word for a POSIX shell only where it needs it, so printed commands can be pasted. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
