// JSON Schemas (draft 2020-12) of what sgq prints for programs: the `--summary json` object
// and the records of the JSON formats. `sgq describe --schema NAME` prints them; the tests
// check real output against them.

import { RECORD_FIELDS, type FieldSpecs } from '../../../core/record-fields.js';

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

/** A field of the one description (record-fields.ts) as JSON Schema; the same name in several kinds of record gets one entry. */
function fieldSchemas(): Record<string, { type: string | string[]; description: string }> {
  const out: Record<string, { type: string | string[]; description: string }> = {};
  for (const fields of Object.values(RECORD_FIELDS) as FieldSpecs[]) {
    for (const [name, spec] of Object.entries(fields)) {
      const type = spec.kind === 'integer' ? 'integer' : spec.kind === 'number' ? 'number' : 'string';
      const prior = out[name];
      const nullable = spec.nullable || (prior !== undefined && Array.isArray(prior.type));
      out[name] = { type: nullable ? [type, 'null'] : type, description: prior?.description ?? spec.description };
    }
  }
  return out;
}

// Built on first use: the tables below hold every record field, and only `describe --schema`
// needs them; help and `describe` name the schemas by their titles.

/** Each schema's title, by name. */
export const SCHEMA_TITLES = { summary: 'sgq --summary json', ndjson: 'one line of -o ndjson', json: '-o json' } as const;

export type SchemaName = keyof typeof SCHEMA_TITLES;
export const SCHEMA_NAMES = Object.keys(SCHEMA_TITLES) as SchemaName[];

let built: ReturnType<typeof buildSchemas> | undefined;

/** The JSON Schema of each name. */
export function schemas(): ReturnType<typeof buildSchemas> {
  return (built ??= buildSchemas());
}

function buildSchemas() {
  /** A record as the service sent it: the fields the routes are known to send, any others too; `query_user` first when several users ran. */
  const record = {
    type: 'object',
    properties: {
      query_user: { type: 'string', description: 'the user the record was fetched for (several users, or named in --fields)' },
      ...fieldSchemas(),
    },
    additionalProperties: true,
    description: 'one record, exactly as the service sent it (integers past 2^53 keep every digit); every field is optional; --fields selects and orders its keys, missing ones are null',
  } as const;
  const count = { type: 'integer', minimum: 0 } as const;

  return {
    summary: {
      $schema: SCHEMA,
      title: SCHEMA_TITLES.summary,
      description: 'the last line of stderr with --summary json',
      type: 'object',
      required: ['users', 'totals', 'exit_code'],
      properties: {
        users: {
          type: 'array',
          description: 'one entry per user (with many users, only those that failed)',
          items: {
            type: 'object',
            required: ['user', 'pages', 'records', 'credits_used', 'errors', 'exit_code'],
            properties: {
              user: { type: ['string', 'null'] },
              pages: count,
              records: count,
              credits_used: count,
              errors: { type: 'array', items: { type: 'string' } },
              exit_code: count,
              extra_calls: { type: 'integer', minimum: 0, description: 'with --parallel, when not 0: calls made ahead that wrote nothing' },
              resume: { type: 'string', description: 'the command that fetches the rest' },
            },
            additionalProperties: true,
          },
        },
        totals: {
          type: 'object',
          required: ['users', 'failed', 'pages', 'records', 'credits_used', 'credits_left'],
          properties: {
            users: count,
            failed: count,
            pages: count,
            records: count,
            extra_calls: { type: 'integer', minimum: 0, description: 'with --parallel: calls made ahead that wrote nothing (past the end, or dropped at a failure or stop)' },
            credits_used: count,
            credits_left: { type: ['integer', 'null'], description: 'the last current_credits seen; null when none was reported' },
            cached_pages: { ...count, description: 'pages answered from the cache (--cache); present only when there were some' },
          },
          additionalProperties: true,
        },
        prices: {
          type: 'object',
          additionalProperties: count,
          description: 'the prices this run measured from the balances, in credits a call by route (graph/get_followers): those later runs on the profile use; present only when one was measured',
        },
        exit_code: count,
      },
      additionalProperties: true,
    },
    ndjson: { $schema: SCHEMA, title: SCHEMA_TITLES.ndjson, ...record },
    json: { $schema: SCHEMA, title: SCHEMA_TITLES.json, description: 'one array of every record of the run', type: 'array', items: record },
  } as const satisfies Record<SchemaName, { title: string; [key: string]: unknown }>;
}
