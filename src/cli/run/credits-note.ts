// What a balance note holds (credits-store.ts keeps it), checked as it is read: a note is a
// file anyone can edit or a crash can damage, and what sgq shows from it must be a finite
// number, never a null or an ∞ (a balance past the double range was once kept as null, and
// every later `sgq credits` crashed on it). What cannot be read is named, for one line on
// stderr, and left out: the next run that records a balance writes the note afresh.

export interface SeenBalance {
  credits: number;
  /** When it was seen, ISO 8601 UTC. */
  seen_at: string;
  /** The route whose answer reported it. */
  route: string;
  /** The address it was seen at. */
  base_url: string;
}

/** A route's price as measured from the balance before and after a call. */
export interface ObservedPrice {
  credits: number;
  seen_at: string;
}

/** One owner's note. */
export interface Note {
  balance?: SeenBalance;
  /** Route path → price. */
  prices: Record<string, ObservedPrice>;
}

/** Told what part of a note cannot be read: one line for stderr (the caller says it once a run). */
export type NoteWarning = (line: string) => void;

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A price as kept; a hand-damaged entry is not one. */
export const isPrice = (v: unknown): v is ObservedPrice => isRecord(v) && Number.isSafeInteger(v.credits) && (v.credits as number) >= 0;

/** A value as a message shows it: short, escaped, ∞ as the number JSON.parse made of 1e400. */
function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = typeof value === 'number' ? String(value) : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** What is wrong with a kept balance, if anything. */
export function balanceProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return `balance is ${shown(value)}, not an object`;
  if (typeof value.credits !== 'number' || !Number.isFinite(value.credits)) return `balance.credits is ${shown(value.credits)}, not a finite number`;
  for (const key of ['seen_at', 'route', 'base_url'] as const) {
    if (typeof value[key] !== 'string') return `balance.${key} is ${shown(value[key])}, not a string`;
  }
  return undefined;
}

/** The balance as kept, its four fields only (a note's other keys never reach `sgq credits --json`). */
export const keptBalance = (value: Record<string, unknown>): SeenBalance => ({
  credits: value.credits as number,
  seen_at: value.seen_at as string,
  route: value.route as string,
  base_url: value.base_url as string,
});

/** The note a file's text holds, what could be read of it, and the first thing that could not. */
export function parseNote(text: string): { note: Note; problem?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { note: { prices: {} }, problem: 'not JSON' };
  }
  if (!isRecord(parsed)) return { note: { prices: {} }, problem: `${shown(parsed)}, not a JSON object` };
  const problems: string[] = [];
  const note: Note = { prices: {} };
  if (parsed.balance !== undefined) {
    const problem = balanceProblem(parsed.balance);
    if (problem) problems.push(problem);
    else note.balance = keptBalance(parsed.balance as Record<string, unknown>);
  }
  if (parsed.prices !== undefined && !isRecord(parsed.prices)) problems.push(`prices is ${shown(parsed.prices)}, not an object`);
  for (const [route, seen] of Object.entries(isRecord(parsed.prices) ? parsed.prices : {})) {
    if (isPrice(seen)) note.prices[route] = seen;
    else problems.push(`the price of ${/^[\w./-]+$/.test(route) ? route : shown(route)} is ${shown(isRecord(seen) ? seen.credits : seen)}, not a whole number of credits`);
  }
  return { note, problem: problems[0] };
}

/** The line that says a note could not be read, and what becomes of it. */
export const damagedNoteLine = (file: string, problem: string): string =>
  `the balance note ${file} cannot be read (${problem}): ignored; the next run that sees a balance writes it afresh`;
