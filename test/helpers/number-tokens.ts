import fc from 'fast-check';

/** A run of decimal digits, leading zeros allowed. */
export const digits = (min: number, max: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

/**
 * Every number token RFC 8259 §6 allows: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? exponent)?,
 * with at most `maxDigits` digits in the integer and in the fraction part. The exponent's
 * digits are `digits(1, 5)` unless given (a bounded value, say, for a reader of doubles).
 */
export function numberToken(maxDigits: number, exponent: fc.Arbitrary<string> = digits(1, 5)): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digits(0, maxDigits)).map(([a, b]) => a + b)),
      fc.option(digits(1, maxDigits).map((d) => `.${d}`), { nil: '' }),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), exponent).map((p) => p.join('')), { nil: '' }),
    )
    .map((parts) => parts.join(''));
}
