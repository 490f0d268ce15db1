import type { JsonObject } from '../../core/classify.js';
import type { Json } from '../../core/json.js';

/**
 * The value of `--fields` name `field` in a record: the key itself if the record has it, else a
 * dotted path into nested objects (`user.username`). Undefined when there is no such value.
 */
export function fieldValue(record: JsonObject, field: string): Json | undefined {
  if (field in record) return record[field];
  if (!field.includes('.')) return undefined;
  let value: Json | undefined = record;
  for (const key of field.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !(key in value)) return undefined;
    value = (value as JsonObject)[key];
  }
  return value;
}

/** `--fields`: selects and orders the named fields, null where a record lacks one. */
export interface Projection {
  project(record: JsonObject): JsonObject;
  /** Warns of each field that no record had, since a column of nulls is most often a typo. */
  end(): void;
}

export function projection(fields: readonly string[] | undefined, warn?: (line: string) => void): Projection {
  if (!fields) return { project: (r) => r, end() {} };
  const unseen = new Set(fields);
  let records = 0;
  return {
    project(record) {
      records++;
      const out: JsonObject = {};
      for (const f of fields) {
        const value = fieldValue(record, f);
        if (value !== undefined) unseen.delete(f);
        out[f] = value ?? null;
      }
      return out;
    },
    end() {
      if (records === 0) return;
      for (const f of unseen) warn?.(`--fields: no record has a field "${f}", so its column is empty; check the name (nested fields are written user.username)`);
    },
  };
}
