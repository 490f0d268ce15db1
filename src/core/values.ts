// The rules for numeric values that both a flag and a setting take (--timeout and `timeout`,
// --retries and `retries`): one rule for each, so `config set` and the flag always agree.
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
