// The rules for values that both a flag and a setting take (--timeout and `timeout`,
// --retries and `retries`, --notify and `notify`): one rule for each, so `config set` and the
// flag always agree.
// A value that breaks its rule throws a ValueError whose message says what is wanted.

export class ValueError extends Error {}

export function positiveInt(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || Number(value) > max) {
      throw new ValueError(`${name} must be a whole number from 1${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}.`);
    }
    return Number(value);
  };
}

export function nonNegativeInt(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value) > max) {
      throw new ValueError(`${name} must be a whole number from 0${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}.`);
    }
    return Number(value);
  };
}

export function positiveSeconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0) || n > 3600) {
    throw new ValueError('Use a number of seconds greater than 0 and at most 3600.');
  }
  return n;
}

/**
 * A webhook address (--notify, `notify`): http or https, without credentials. It may hold a
 * secret (a Slack webhook's path does), so the message never repeats it.
 */
export function notifyAddress(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value.trim());
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ValueError('The notify address must be an http:// or https:// URL, such as the webhook address a receiver shows (https://hooks.slack.com/services/…).');
  if (url.username || url.password) throw new ValueError('The notify address must not hold credentials (user:password@).');
  return url.href;
}
