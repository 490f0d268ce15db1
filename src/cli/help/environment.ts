import { SETTINGS, SETTING_NAMES } from '../../core/config.js';

// The environment variables sgq reads: one table for `sgq describe` (its "environment") and
// `sgq help environment`. The settings' own variables come from the settings table.

export interface EnvironmentVariable {
  name: string;
  description: string;
}

/** Variables sgq reads besides the settings' own. */
const OTHERS: readonly EnvironmentVariable[] = [
  { name: 'SGQ_PROFILE', description: 'config profile to use (flag --profile)' },
  { name: 'SGQ_CONFIG_DIR', description: 'folder of config.json (default $XDG_CONFIG_HOME/sgq)' },
  { name: 'SGQ_STATE', description: 'file of the --since-last marks (flag --state)' },
  { name: 'SGQ_SANDBOX_SHAPE', description: "records of `--sandbox` runs: service (the default: the service's prefixed fields) or spec (username, last_checked)" },
  { name: 'SGQ_SANDBOX_CHURN', description: 'followers of `--sandbox` runs come, go and flicker with the clock: about this fraction of a list a day (as `sgq sandbox --churn`)' },
  { name: 'SGQ_RETRY_AFTER_CAP', description: 'longest Retry-After waited without --max-wait, in seconds (default 60)' },
  { name: 'HTTP_PROXY', description: 'proxy for http:// services (also http_proxy)' },
  { name: 'HTTPS_PROXY', description: 'proxy for https:// services (also https_proxy)' },
  { name: 'ALL_PROXY', description: "proxy for either, when the scheme's own is unset (also all_proxy)" },
  { name: 'NO_PROXY', description: 'hosts reached directly (also no_proxy)' },
  { name: 'NODE_EXTRA_CA_CERTS', description: 'extra trusted CA certificates (PEM file)' },
  { name: 'NO_COLOR', description: "no colour on stderr, nor in a terminal table's faint marks" },
  { name: 'FORCE_COLOR', description: "colour on stderr even when it is not a terminal (and a terminal table's faint marks)" },
  { name: 'SGQ_PAGER', description: 'pager for output on a terminal, before PAGER (default less -FRX; empty or cat: none)' },
  { name: 'PAGER', description: 'pager for output on a terminal when SGQ_PAGER is unset' },
  { name: 'XDG_CACHE_HOME', description: "folder of the --cache answers and of the compile cache of sgq's code (default ~/.cache; sgq uses its sgq/ folder)" },
  { name: 'NODE_DISABLE_COMPILE_CACHE', description: "set and not empty: the compile cache of sgq's code off (sgq/code in the cache folder: Node's own on Node 22 and later, sgq's on Node 20)" },
];

/** Every variable sgq reads: the settings' first, in the settings' order. */
export function environmentVariables(): EnvironmentVariable[] {
  return [...SETTING_NAMES.map((name) => ({ name: SETTINGS[name].env, description: `setting ${name}: ${SETTINGS[name].describe}` })), ...OTHERS];
}
