import type { Help } from 'commander';
import { EXIT_MEANINGS, ExitCode } from '../../core/errors.js';
import { FORMATS } from '../../core/format-names.js';
import { environmentVariables } from './environment.js';
import { FORMAT_DESCRIPTIONS } from './value-meanings.js';

// `sgq help environment`, `sgq help exit-codes`, `sgq help formats` (as gh's help topics):
// each a two-column list from the same table `sgq describe` prints, fitted to the help's
// width the way Commander fits the options.

export interface HelpTopic {
  name: string;
  summary: string;
  /** The topic's text, for the width of `helper` (the terminal's, or 80 into a pipe). */
  render(helper: Help): string;
}

type Item = readonly [term: string, description: string];

function list(helper: Help, intro: string, items: readonly Item[], outro?: string): string {
  const termWidth = Math.max(...items.map(([term]) => term.length));
  const width = helper.helpWidth ?? 80;
  const parts = [helper.boxWrap(intro, width), '', ...items.map(([term, description]) => helper.formatItem(term, termWidth, description, helper))];
  if (outro) parts.push('', helper.boxWrap(outro, width));
  return `${parts.join('\n')}\n`;
}

export const HELP_TOPICS: readonly HelpTopic[] = [
  {
    name: 'environment',
    summary: 'the environment variables sgq reads',
    render: (helper) =>
      list(
        helper,
        'Environment variables sgq reads. For a setting, a flag wins over its variable, and the variable over the profile in the config file.',
        environmentVariables().map((v) => [v.name, v.description]),
        'The same list is in `sgq describe --json` (.environment).',
      ),
  },
  {
    name: 'exit-codes',
    summary: 'what each exit code means',
    render: (helper) =>
      list(
        helper,
        'Exit codes of sgq. When several users fail differently, the run exits with the most serious failure.',
        (Object.keys(ExitCode) as (keyof typeof ExitCode)[]).map((kind) => [`${ExitCode[kind]} ${kind}`, EXIT_MEANINGS[kind]]),
        'The same list is in `sgq describe --json` (.exit_codes).',
      ),
  },
  {
    name: 'formats',
    summary: 'the output formats of -o, --output',
    render: (helper) =>
      list(
        helper,
        'Output formats of -o, --output. Without -o: table on a terminal, else ndjson (or the output setting).',
        FORMATS.map((f) => [f, FORMAT_DESCRIPTIONS[f]]),
        'The same list is in `sgq describe --json` (.formats).',
      ),
  },
];

