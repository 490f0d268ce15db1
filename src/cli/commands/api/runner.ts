import { readFileSync } from 'node:fs';
import { usageError } from '../../../core/errors.js';
import { numberValue, parseJson, type Json } from '../../../core/json.js';
import type { CommandContext } from '../../program/context.js';
import { findRouteByPath, normalizeRoutePath } from '../../../core/routes.js';
import { execute, type OutputFlags } from '../../run/execute.js';

export interface ApiFlags extends OutputFlags {
  method: string;
  rawField: string[];
  field: string[];
  paginate?: boolean;
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** `sgq api <route>`: any route, with the same auth, errors and output as the generated commands. */
export async function runApiCommand(ctx: CommandContext, routeArg: string, flags: ApiFlags): Promise<number> {
  const path = normalizeRoutePath(routeArg);
  if (!/^[\w-]+(\/[\w-]+)*$/.test(path)) throw usageError(`invalid route ${JSON.stringify(routeArg)}`, 'give a path such as graph/get_followers');
  const method = flags.method.toUpperCase();
  if (!METHODS.has(method)) throw usageError(`invalid --method ${flags.method}`, `use one of ${[...METHODS].join(', ')}`);

  const fields: Record<string, Json> = {};
  for (const f of flags.rawField) {
    const [key, value] = splitField(f, '-f');
    fields[key] = value;
  }
  for (const f of flags.field) {
    const [key, value] = splitField(f, '-F');
    fields[key] = typedValue(value);
  }
  // A page typed `1.0` is kept as sent (a RawNumber), and is still page 1.
  const page = numberValue(fields.page);
  if (flags.paginate && fields.page !== undefined && !(page !== undefined && Number.isSafeInteger(page) && page >= 1)) {
    throw usageError('with --paginate, page must be a whole number from 1: use -F page=N');
  }

  const known = findRouteByPath(path);
  const startPage = page ?? 1;
  // Without --paginate, only a plain page number is followed; `1.0` goes out as typed.
  const paginated = flags.paginate === true || typeof fields.page === 'number';
  return execute(
    ctx,
    {
      label: `api ${path}`,
      path,
      needsKey: known?.needsKey ?? false,
      startedAt: new Date(),
      concurrency: 1,
      tagUser: false,
      jobs: () => [
        {
          user: null,
          request: {
            path,
            method,
            payload: (page) => (page === null ? fields : { ...fields, page }),
            sendKey: true,
            paginated,
            startPage,
            follow: flags.paginate === true,
            wholeBodyIsRecord: true,
          },
        },
      ],
    },
    flags,
  );
}

function splitField(text: string, flag: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) throw usageError(`invalid ${flag} ${JSON.stringify(text)}`, `use ${flag} key=value`);
  return [text.slice(0, at), text.slice(at + 1)];
}

/** Like `gh api -F`: true, false, null and numbers become JSON; `@file` reads a file; the rest stays a string. */
function typedValue(value: string): Json {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(value)) return parseJson(value);
  if (value.startsWith('@')) {
    const file = value.slice(1);
    if (file === '-') throw usageError('-F key=@- is not supported; give a file name');
    try {
      return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch {
      throw usageError(`cannot read ${file} for -F`);
    }
  }
  return value;
}
