import type { JsonObject } from '../../core/classify.js';
import { RawNumber, type Json } from '../../core/json.js';
import type { Formatter } from './formatter.js';
import type { Sink } from './sink.js';

// The yaml package is loaded with this format only.
let YAML: typeof import('yaml') | undefined;
export async function loadYaml(): Promise<void> {
  YAML ??= await import('yaml');
}

/** yaml writes a BigInt as a plain integer, every digit; a RawNumber that is no integer is a plain double. */
function plain(value: Json): unknown {
  if (value instanceof RawNumber) return /^-?\d+$/.test(value.text) ? BigInt(value.text) : Number(value.text);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(plain);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = plain(value[key]!);
  return out;
}

/** A YAML stream: one document per record, each opened by `---`, so it streams page by page. */
export function yamlFormatter(sink: Sink): Formatter {
  if (!YAML) throw new Error('loadYaml() must run before YAML is written');
  const { stringify } = YAML;
  return {
    write(records: readonly JsonObject[], lossless = true) {
      if (records.length === 0) return;
      let out = '';
      for (const r of records) out += `---\n${stringify(lossless ? plain(r) : r, { lineWidth: 0 })}`;
      sink.write(out);
    },
    end() {},
  };
}
