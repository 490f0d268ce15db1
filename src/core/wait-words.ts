import { isoTime } from './iso-time.js';

// How long a wait is and when it ends, in the words of sgq's messages: `2s`, `45 min`,
// `1 h 59 min`, and an instant to the second, never before the one meant.

/** A wait as a person reads it: seconds under two minutes, then minutes, then hours and minutes. */
export function waitWords(ms: number): string {
  if (ms < 120_000) return `${Math.max(0, Math.ceil(ms / 1000))}s`;
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ''}`;
}

/**
 * An instant as ISO 8601 UTC to the second (2026-11-28T15:04:05Z): a time to wait for rounded
 * up (never earlier than `ms`), one that has passed rounded down (never later).
 */
export const isoSecond = (ms: number, round: 'up' | 'down' = 'up'): string =>
  isoTime(new Date((round === 'up' ? Math.ceil : Math.floor)(ms / 1000) * 1000)).replace(/\.\d{3}Z$/, 'Z');
