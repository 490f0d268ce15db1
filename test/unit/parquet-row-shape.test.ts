import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/classify.js';
import { parseJson } from '../../src/core/json.js';
import { KeyOrder, RowShape } from '../../src/parquet/row-shape.js';

// The key order the Parquet writer reads a page's records by (parquet-bytes.test.ts pins the
// bytes it writes that way): a record is read by the shape only when its keys are the shape's,
// in its order, and only a record whose every key is a column (not the caller's own) teaches it.

const record = (text: string) => parseJson(text) as JsonObject;

describe('RowShape', () => {
  const names = ['a', 'b', '_unfit', 'c'];
  it('reads a record of the learnt key order by its places, and tells the columns it leaves empty', () => {
    const shape = RowShape.of(names, 2)!;
    expect(shape.read(record('{"b":1,"a":"x"}'))).toBe(false); // nothing learnt yet
    shape.learn(record('{"b":1,"a":"x"}'));
    expect(shape.read(record('{"b":2,"a":null}'))).toBe(true);
    expect(shape.values.slice(0, shape.size)).toEqual([2, null]);
    expect(shape.columnAt).toEqual([1, 0]);
    expect(shape.absent).toEqual([3]);
  });
  it('refuses another order, a key more or less, and learns no record of a key no column has or of the caller\'s own', () => {
    const shape = RowShape.of(names, 2)!;
    shape.learn(record('{"a":1,"b":2}'));
    for (const other of ['{"b":2,"a":1}', '{"a":1}', '{"a":1,"b":2,"c":3}', '{}']) expect(shape.read(record(other))).toBe(false);
    shape.learn(record('{"a":1,"z":2}'));
    shape.learn(record('{"a":1,"_unfit":2}'));
    expect(shape.read(record('{"a":1,"b":2}'))).toBe(true);
  });
  it('is none where a record\'s keys cannot tell the columns: two of one name, or a name a plain object inherits', () => {
    expect(RowShape.of(['a', 'a'], 2)).toBeUndefined();
    expect(RowShape.of(['constructor', 'b'], 2)).toBeUndefined();
    expect(RowShape.of(['a', 'b'], 2)).toBeDefined();
  });
});

describe('KeyOrder', () => {
  it('is the same only for the same keys in the same order', () => {
    const order = new KeyOrder();
    expect(order.same(record('{}'))).toBe(false);
    order.take(record('{"a":1,"b":2}'));
    expect(order.same(record('{"a":3,"b":[4]}'))).toBe(true);
    for (const other of ['{"b":2,"a":1}', '{"a":1}', '{"a":1,"b":2,"c":3}']) expect(order.same(record(other))).toBe(false);
  });
});
