// The progress line of a run on a terminal: what it fetched, what it has cost so far and,
// when the run has a bound, how far along it is and how long is left. Built here as plain
// text that fits the terminal; the Reporter draws it (with ora's spinner) at a bounded rate.

import { cutToWidth, displayWidth } from '../terminal/text-width.js';
import { count, grouped } from '../../core/words.js';
import { visible } from '../terminal/visible.js';

/** What bounds a run, as far as it is known before it ends. */
export interface RunBounds {
  /** --limit: records. */
  limit?: number;
  /** --max-credits. */
  maxCredits?: number;
  /** --max-pages of each user (with --all); a bound only with `users`. */
  maxPages?: number;
  /** The users given, when the list is known in advance (arguments, not stdin). */
  users?: number;
}

/** Where the run stands. */
export interface RunCounts {
  pages: number;
  records: number;
  /** Users whose job has ended. */
  usersDone: number;
  /** Credits spent so far (the budget's meter). */
  credits: number;
  /** The balance the last answer reported, if any did. */
  creditsLeft: number | null;
  /** The user whose page came last; null for routes without one. */
  user: string | null;
  elapsedMs: number;
}

/**
 * How far along the run is, from 0 to 1, or undefined without a bound. The run ends at the
 * first bound it meets (--limit, --max-credits) or once every user is done, so the furthest
 * bound is the one that tells.
 */
export function fractionDone(bounds: RunBounds, counts: RunCounts): number | undefined {
  const parts: number[] = [];
  if (bounds.limit !== undefined && bounds.limit > 0) parts.push(counts.records / bounds.limit);
  if (bounds.maxCredits !== undefined && bounds.maxCredits > 0) parts.push(counts.credits / bounds.maxCredits);
  const { users, maxPages } = bounds;
  // Users done, and pages against the most the users may have: each is a floor of how far along it is.
  if (users !== undefined && users > 1) parts.push(counts.usersDone / users);
  if (users !== undefined && users > 0 && maxPages !== undefined && maxPages > 0) parts.push(counts.pages / (users * maxPages));
  return parts.length === 0 ? undefined : Math.min(1, Math.max(...parts));
}

const number = (n: number): string => grouped(Math.round(n));
const plural = (n: number, word: string): string => count(Math.round(n), word);

/** 75 s as 1:15, 2 h as 2:00:00. */
export function clock(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, seconds % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

const BAR = 12;

/** A bar of `BAR` cells, `[████░░░░]`, and the percentage. */
function bar(fraction: number): string {
  const full = Math.floor(fraction * BAR);
  return `[${'█'.repeat(full)}${'░'.repeat(BAR - full)}] ${Math.floor(fraction * 100)}%`;
}

/** The records a second, once a second has passed (before that the rate says nothing). */
function rate(counts: RunCounts): string | undefined {
  if (counts.elapsedMs < 1000) return undefined;
  return `${number((counts.records * 1000) / counts.elapsedMs)} records/s`;
}

/** The time left at the pace so far, once there is a pace. */
function timeLeft(fraction: number, elapsedMs: number): string | undefined {
  if (fraction <= 0 || fraction >= 1 || elapsedMs < 1000) return undefined;
  return `${clock((elapsedMs * (1 - fraction)) / fraction)} left`;
}

/**
 * The parts of the line, most wanted first: a narrow terminal drops them from the end, so
 * the money stays in view longest after the counts.
 */
export function progressParts(label: string, bounds: RunBounds, counts: RunCounts): string[] {
  const fraction = fractionDone(bounds, counts);
  const credits = `${plural(counts.credits, 'credit')} spent${counts.creditsLeft === null ? '' : `, ${number(counts.creditsLeft)} left`}`;
  const parts = [
    plural(counts.records, 'record'),
    credits,
    fraction === undefined ? undefined : bar(fraction),
    timeLeft(fraction ?? 0, counts.elapsedMs),
    // Escaped before it is measured: the reporter's own escaping would find nothing left to do.
    visible(counts.user === null ? label : `${label} ${counts.user}`),
    plural(counts.pages, 'page'),
    rate(counts),
    clock(counts.elapsedMs),
  ];
  return parts.filter((part): part is string => part !== undefined);
}

const SEPARATOR = ' · ';

/**
 * The parts joined as fit `width` columns: whole parts from the start while they fit, and
 * the first one cut with `…` when even it does not. Needs loadTextWidth() first.
 */
export function fitLine(parts: readonly string[], width: number): string {
  if (width <= 0) return '';
  let line = '';
  let used = 0;
  for (const part of parts) {
    const w = displayWidth(part) + (line === '' ? 0 : SEPARATOR.length);
    if (used + w > width) break;
    line += (line === '' ? '' : SEPARATOR) + part;
    used += w;
  }
  if (line !== '' || parts.length === 0) return line;
  return `${cutToWidth(parts[0]!, width - 1).text}…`;
}
