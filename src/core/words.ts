// Numbers and counts in the words of sgq's messages, for the CLI and the core alike: one place
// that makes a count agree with its noun (`1 record`, `2 records`).

/**
 * `1,234,567` as toLocaleString('en-US') writes an integer, without the cost of loading the
 * locale data (14 ms of a diff, profiled); any other number goes to toLocaleString.
 */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let out = '';
  for (let i = 0; i < digits.length; i++) out += `${i > 0 && (digits.length - i) % 3 === 0 ? ',' : ''}${digits[i]}`;
  return n < 0 ? `-${out}` : out;
}

/** `1 call`, `3,000 records`, `0 entries`: a count as a person reads it, the noun in the plural but for one. */
export const count = (n: number, noun: string, plural = `${noun}s`): string => `${grouped(n)} ${n === 1 ? noun : plural}`;
