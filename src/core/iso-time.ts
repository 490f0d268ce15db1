// A time as ISO 8601 UTC text, as Date#toISOString writes it, from the UTC fields alone. V8's
// toISOString sets up the local time zone first (reads /etc/localtime and the zone data, some
// 0.2 ms the first time), which a run that prints no local time never needs.

const two = (n: number) => (n < 10 ? `0${n}` : String(n));

/** `date` as toISOString writes it (2024-04-07T10:00:00.000Z); years outside 0-9999 go to toISOString. */
export function isoTime(date: Date = new Date()): string {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  const ms = date.getUTCMilliseconds();
  return `${String(year).padStart(4, '0')}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}.${ms < 100 ? `0${two(ms)}` : ms}Z`;
}
