/** `1 call`, `3,000 records`: a count as a person reads it, the noun in the plural past one. */
export const count = (n: number, noun: string): string => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
