// Reads the `sgq` examples a user sees, far enough to run them and check them: the examples
// of a command's --help, and the shell lines of the README and docs/. Also what an example
// names: the exit code it is documented with, and the record fields its --fields, --key,
// --jq and jq filters read.

/** One command line a page shows, as a user would paste it. */
export interface Example {
  /** Where it is shown: `sgq graph followers --help`, `docs/output.md:42`. */
  where: string;
  /** The command line, continuation lines joined, its trailing comment kept. */
  line: string;
  /** The exit code the page gives for it (`# exit 6 …`), else 0. */
  exit: number;
}

/** Whether a shell line runs sgq: at its start, after `|`, `;`, `&&`, `||`, `$(` or variable assignments. */
export const runsSgq = (line: string): boolean => /(?:^|[|;&(]\s*|\$\(\s*)(?:[A-Z_][A-Z0-9_]*=\S*\s+)*sgq\s/.test(stripComment(line));

/** The line without a trailing `# comment` (a `#` that starts a word, outside quotes). */
export function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  }
  return line;
}

/** The exit code a comment gives (`# exit 6 until …`, `# exits 7`), else 0. */
export function documentedExit(comment: string): number {
  const m = /#.*\bexits? (\d+)\b/.exec(comment);
  return m ? Number(m[1]) : 0;
}

/** The examples of a help text: `  $ ` lines under `Examples:`, ` \` continuations joined, a comment line above one belonging to it. */
export function helpExamples(help: string, where: string): Example[] {
  const lines = help.split('\n');
  const start = lines.indexOf('Examples:');
  if (start < 0) return [];
  const out: Example[] = [];
  let comment = '';
  for (let i = start + 1; i < lines.length && lines[i]!.startsWith('  '); i++) {
    const text = lines[i]!.trim();
    if (text.startsWith('# ')) {
      comment = text;
      continue;
    }
    if (!text.startsWith('$ ')) continue;
    let line = text.slice(2);
    while (line.endsWith(' \\') && i + 1 < lines.length) line = `${line.slice(0, -2)} ${lines[++i]!.trim()}`;
    const full = comment ? `${line}  ${comment}` : line;
    out.push({ where, line: full, exit: documentedExit(comment || full.slice(stripComment(full).length)) });
    comment = '';
  }
  return out;
}

/**
 * The shell lines of a Markdown page that run sgq: every line of a ```sh block, the `$ ` lines
 * of a ```console block (the others are what it printed). Other languages (cron, sql, ts) are
 * not shell lines.
 */
export function markdownExamples(text: string, page: string): Example[] {
  const out: Example[] = [];
  let language: string | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const fence = /^\s*```(\w*)\s*$/.exec(raw);
    if (fence) {
      language = language === undefined ? fence[1]! : undefined;
      continue;
    }
    if (language !== 'sh' && language !== 'console') continue;
    let line = language === 'console' ? (raw.startsWith('$ ') ? raw.slice(2) : undefined) : raw;
    if (line === undefined || !runsSgq(line)) continue;
    const n = i + 1;
    while (stripComment(line).endsWith('\\') && i + 1 < lines.length) line = `${stripComment(line).slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
    out.push({ where: `${page}:${n}`, line, exit: documentedExit(line.slice(stripComment(line).length)) });
  }
  return out;
}

/** The top-level names a jq filter reads from its input: `.a.b`, `.[0].c`, `.d[]` name a, b, c, d. */
export function jqFields(filter: string): string[] {
  // String literals name no field (and may hold dots).
  const code = filter.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const names = new Set<string>();
  for (const m of code.matchAll(/(?<![\w$)\].])\.(?:[A-Za-z_]\w*|\[[^\]]*\])(?:\.[A-Za-z_]\w*|\[[^\]]*\]|\.\[[^\]]*\])*/g)) {
    for (const name of m[0].matchAll(/\.([A-Za-z_]\w*)/g)) names.add(name[1]!);
  }
  return [...names];
}

/** An option's values after it, by its flags as `describe --json` gives them (`--arg <name> <value>` takes two). */
export type ValueCounts = ReadonlyMap<string, number>;

export interface ParsedArgv {
  /** The command words: `['graph', 'followers']`, `['fmt']`. */
  command: string[];
  /** Arguments that are neither options nor their values. */
  positionals: string[];
  /** Each option given, with its values. */
  options: Map<string, string[]>;
}

/**
 * sgq's argv split into its command words, positionals and options, by the option tables of
 * `describe --json` (`values`: how many values each flag takes; `commands`: the command names).
 */
export function parseArgv(argv: readonly string[], values: ValueCounts, commands: ReadonlySet<string>): ParsedArgv {
  const parsed: ParsedArgv = { command: [], positionals: [], options: new Map() };
  let rest = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (rest || arg === '-' || !arg.startsWith('-')) {
      const candidate = [...parsed.command, arg].join(' ');
      if (!parsed.positionals.length && commands.has(candidate)) parsed.command.push(arg);
      else parsed.positionals.push(arg);
      continue;
    }
    if (arg === '--') {
      rest = true;
      continue;
    }
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const count = values.get(flag) ?? 0;
    const given = inline !== undefined ? [inline] : argv.slice(i + 1, i + 1 + count);
    if (inline === undefined) i += count;
    parsed.options.set(flag, [...(parsed.options.get(flag) ?? []), ...given]);
  }
  return parsed;
}

/** The record fields an sgq run names: `--fields` (a path's first part), `--key`, and the fields `--jq` reads. */
export function namedFields(parsed: ParsedArgv): string[] {
  const fields = (parsed.options.get('--fields') ?? []).flatMap((list) => list.split(',').map((f) => f.trim().split('.')[0]!));
  const keys = parsed.options.get('--key') ?? [];
  const jq = (parsed.options.get('--jq') ?? []).flatMap(jqFields);
  return [...new Set([...fields, ...keys, ...jq])].filter((f) => f !== '');
}

/** Every object key at any depth of the JSON values in `text` (one document, or one a line). */
export function keysIn(text: string): Set<string> {
  const keys = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        keys.add(k);
        visit(v);
      }
    }
  };
  try {
    visit(JSON.parse(text));
  } catch {
    for (const line of text.split('\n')) {
      try {
        visit(JSON.parse(line));
      } catch {
        // not JSON: names no key
      }
    }
  }
  return keys;
}
