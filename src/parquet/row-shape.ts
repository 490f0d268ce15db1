import type { JsonObject } from '../core/classify.js';
import type { Json } from '../core/json.js';

// The key order of the last record whose keys were all columns: the records of a page come
// with the same keys in the same order, so the next one is read by a for-in over its own keys
// (V8 loads each value by its slot, where `r[column.name]` for each column is a megamorphic
// lookup a value) and checked by comparing each key with the one at its place (interned
// strings: one pointer each) instead of looking it up in a set. A record of other keys is
// read the general way and teaches the shape. KeyOrder is that comparison alone (has a record
// the keys of the last one?): the writer's check that a record fits, a part's first keys.
// Pure speed: the same values reach the same columns.

export class RowShape {
  /** The shape's keys, in a record's order. */
  private keys: string[] = [];
  /** The column of each key. */
  readonly columnAt: number[] = [];
  /** The columns none of the shape's keys fills (each null in such a row), the column left to the caller aside. */
  readonly absent: number[] = [];
  /** The last record read's values, by its keys' places (as many as the shape has keys). */
  readonly values: Json[] = [];

  /**
   * `names`: the columns' names, in order; `left` the one the caller fills itself (`_unfit`).
   * Undefined when a record's keys cannot tell every column's value: two columns of one name,
   * or a name a plain object inherits (`constructor`), which `r[name]` would read from its prototype.
   */
  static of(names: readonly string[], left: number): RowShape | undefined {
    const columnOf = new Map<string, number>();
    for (const [i, name] of names.entries()) {
      if (columnOf.has(name) || name in {}) return undefined;
      if (i !== left) columnOf.set(name, i);
    }
    return new RowShape(columnOf, names.length, left);
  }

  private constructor(
    private readonly columnOf: ReadonlyMap<string, number>,
    private readonly columns: number,
    private readonly left: number,
  ) {}

  get size(): number {
    return this.keys.length;
  }

  /** Reads `r`'s values into `values` when its keys are the shape's, in its order; false (values half read) otherwise. */
  read(r: JsonObject): boolean {
    const keys = this.keys;
    const values = this.values;
    let n = 0;
    for (const key in r) {
      if (n === keys.length || key !== keys[n]) return false;
      values[n++] = r[key]!;
    }
    return n === keys.length && n > 0;
  }

  /** Takes `r`'s key order as the shape when each of its keys is a column's; keeps the old one otherwise. */
  learn(r: JsonObject): void {
    const keys: string[] = [];
    const columnAt: number[] = [];
    for (const key in r) {
      const column = this.columnOf.get(key);
      if (column === undefined || !Object.hasOwn(r, key)) return;
      keys.push(key);
      columnAt.push(column);
    }
    const filled = new Set(columnAt);
    this.keys = keys;
    this.columnAt.splice(0, Infinity, ...columnAt);
    this.absent.splice(0, Infinity, ...Array.from({ length: this.columns }, (_, i) => i).filter((i) => i !== this.left && !filled.has(i)));
  }
}

/** A record's keys in its order, compared with another's by identity (interned strings): one pointer a key, no set. */
export class KeyOrder {
  private keys: string[] = [];

  /** Whether `r`'s keys are the ones taken, in the same order. */
  same(r: JsonObject): boolean {
    const keys = this.keys;
    let n = 0;
    for (const key in r) if (n === keys.length || key !== keys[n++]) return false;
    return n === keys.length && n > 0;
  }

  take(r: JsonObject): void {
    this.keys = [];
    for (const key in r) this.keys.push(key);
  }
}
