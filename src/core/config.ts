import { chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ExitCode, SgqError, configError, usageError } from './errors.js';
import { FORMATS } from './format-names.js';
import { ValueError, nonNegativeInt, positiveInt, positiveSeconds } from './values.js';
import { durationMs } from './since.js';
import { parsePrices } from './prices.js';
import { parseRateLimits } from './rate-limits.js';
import { homedir, platform } from '../fs/home.js';
import { readRegularFile } from '../fs/read.js';
import { makePrivateFolder } from '../fs/modes.js';
import { fileError } from '../fs/file-errors.js';

/** The environment variables sgq reads (process.env in the CLI; anything in a library call). */
export type Env = Record<string, string | undefined>;

// The config store: named profiles of settings in one JSON file (mode 0600, since it holds
// API keys). Precedence for every setting: flag > environment > profile > default.

export const SETTINGS = {
  'api-key': { env: 'SGQ_API_KEY', secret: true, describe: 'API key sent as x-api-key' },
  'base-url': { env: 'SGQ_BASE_URL', secret: false, describe: 'service address, may carry a path prefix' },
  output: { env: 'SGQ_OUTPUT', secret: false, describe: 'default output format when stdout is not a terminal' },
  timeout: { env: 'SGQ_TIMEOUT', secret: false, describe: 'seconds per request' },
  retries: { env: 'SGQ_RETRIES', secret: false, describe: 'retries of a transient failure' },
  'snapshot-dir': { env: 'SGQ_SNAPSHOT_DIR', secret: false, describe: 'where --snapshot keeps snapshots' },
  dataset: { env: 'SGQ_DATASET', secret: false, describe: 'the folder every route run appends its records to as Parquet (see docs/dataset.md)' },
  parallel: { env: 'SGQ_PARALLEL', secret: false, describe: 'pages of one user asked at once with --all' },
  'warn-credits': { env: 'SGQ_WARN_CREDITS', secret: false, describe: 'warn on stderr when a run leaves fewer credits than this' },
  cache: { env: 'SGQ_CACHE', secret: false, describe: 'keep successful answers this long (30m, 1h, 7d) and reuse them' },
  prices: { env: 'SGQ_PRICES', secret: false, describe: 'credits a call costs, as route=credits pairs (graph/get_followers=5,metadata/get_tweets=2), over the public table' },
  plan: { env: 'SGQ_PLAN', secret: false, describe: "the account's plan: trial (paces calls within the routes' hourly limits) or paid; unset, sgq learns trial from a refusal" },
  'rate-limits': { env: 'SGQ_RATE_LIMITS', secret: false, describe: "a trial account's requests an hour, as route=requests pairs (graph/get_followers=10), over the published limits" },
  'bigint-as-string': { env: 'SGQ_BIGINT_AS_STRING', secret: false, describe: 'true: write integers past ±2^53 as JSON strings in json, ndjson and yaml, for readers that round them (jq 1.6)' },
  notify: { env: 'SGQ_NOTIFY', secret: true, describe: 'URL a --snapshot run POSTs the changes it found to, as JSON (Slack, Discord or any webhook; see docs/churn.md); it may hold a secret, so it is read like the key' },
  'confirm-lost': { env: 'SGQ_CONFIRM_LOST', secret: false, describe: 'a --snapshot run reports an account lost once it is missing from this many complete snapshots in a row (default 1)' },
  'full-every': { env: 'SGQ_FULL_EVERY', secret: false, describe: "a --snapshot run fetches a user's whole list every this many runs, and between them only what came since its last run (default 1: every run; see docs/churn.md)" },
} as const;

/** The service's public address (its clients call `https://toto.oz.xyz/api`): the base URL when none is set. */
export const DEFAULT_BASE_URL = 'https://toto.oz.xyz';

/** The settings that have a value of their own when none is given, as `config list` and `describe` show it. */
export const SETTING_DEFAULTS: Readonly<Partial<Record<SettingName, string>>> = { 'base-url': DEFAULT_BASE_URL };

export type SettingName = keyof typeof SETTINGS;

/** The values of the `plan` setting: a trial account's calls are paced within its hourly limits. */
export const PLANS = ['trial', 'paid'] as const;
export type Plan = (typeof PLANS)[number];
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];
export const DEFAULT_PROFILE = 'default';

interface StoreShape {
  profiles: Record<string, Partial<Record<SettingName, string>>>;
}

export function isSettingName(name: string): name is SettingName {
  return Object.hasOwn(SETTINGS, name);
}

/** Checks a value before it is stored, so a bad value fails at `config set`, not at 3 a.m. */
export function validateSetting(name: SettingName, value: string): string {
  const v = value.trim();
  switch (name) {
    case 'base-url':
      return normalizeBaseUrl(v);
    case 'output':
      if (!(FORMATS as readonly string[]).includes(v)) throw usageError(`invalid output ${JSON.stringify(value)}`, `use ${FORMATS.join(', ')}`);
      return v;
    // The same parsers as --timeout and --retries: one rule for a flag and a setting.
    case 'timeout':
      return withFlagRule(name, value, () => positiveSeconds(v));
    case 'retries':
      return withFlagRule(name, value, () => nonNegativeInt('retries', 20)(v));
    case 'snapshot-dir':
      if (!v) throw usageError('invalid snapshot-dir: it is empty');
      return v;
    case 'dataset':
      if (!v) throw usageError('invalid dataset: it is empty');
      return v;
    case 'parallel':
      return withFlagRule(name, value, () => positiveInt('parallel', 16)(v));
    case 'cache':
      if (!(Number(durationMs(v)) > 0)) throw usageError(`invalid cache ${JSON.stringify(value)}`, 'use a duration such as 30m, 1h or 7d');
      return v;
    case 'warn-credits':
      return withFlagRule(name, value, () => nonNegativeInt('warn-credits')(v));
    case 'prices':
      parsePrices(v);
      return v;
    case 'plan':
      if (!(PLANS as readonly string[]).includes(v)) throw usageError(`invalid plan ${JSON.stringify(value)}`, `use ${PLANS.join(' or ')}`);
      return v;
    case 'rate-limits':
      parseRateLimits(v);
      return v;
    case 'bigint-as-string':
      return onOff(name, value);
    case 'notify':
      return notifyAddress(v);
    case 'confirm-lost':
      return withFlagRule(name, value, () => positiveInt('confirm-lost', MAX_CONFIRM_LOST)(v));
    case 'full-every':
      return withFlagRule(name, value, () => positiveInt('full-every', MAX_FULL_EVERY)(v));
    case 'api-key':
      if (!v) throw usageError('invalid api-key: it is empty');
      // undici refuses such a header at send time, which would look like a network failure.
      if (HEADER_UNSAFE.test(v)) throw usageError('invalid api-key: it holds control characters, line breaks or letters outside Latin-1, which an HTTP header cannot carry', 'copy the key again without them');
      if (/\s/.test(v)) throw usageError('invalid api-key: it holds white space');
      return v;
  }
}

const ON = ['1', 'true', 'yes', 'on'];
const OFF = ['0', 'false', 'no', 'off'];

/** A setting that is on or off, stored as `true` or `false`. */
function onOff(name: SettingName, value: string): string {
  const v = value.trim().toLowerCase();
  if (ON.includes(v)) return 'true';
  if (OFF.includes(v)) return 'false';
  throw usageError(`invalid ${name} ${JSON.stringify(value)}`, 'use true or false (1 or 0)');
}

/** The most snapshots --confirm-lost waits for: a year of nightly runs. */
export const MAX_CONFIRM_LOST = 366;

/** The most runs --full-every spaces whole lists by: a year of nightly runs. */
export const MAX_FULL_EVERY = 366;

/**
 * The notify address (--notify and the setting, one rule): an http or https URL without
 * credentials. It may hold a secret (a Slack webhook's path does), so no message repeats it.
 */
function notifyAddress(value: string): string {
  const hint = 'give the webhook address as the receiver shows it (https://hooks.slack.com/services/…)';
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw usageError('invalid notify: it is not an http:// or https:// address (not repeated here: it may hold a secret)', hint);
  if (url.username || url.password) throw usageError('invalid notify: it holds credentials (user:password@), which sgq does not send', hint);
  return url.href;
}

/** What an HTTP header value cannot carry: control characters (C0, DEL, C1) and anything past Latin-1. */
const HEADER_UNSAFE = /[^\t\x20-\x7e\xa0-\xff]/;

function withFlagRule(name: SettingName, value: string, parse: () => number): string {
  try {
    parse();
  } catch (error) {
    if (!(error instanceof ValueError)) throw error;
    const rule = error.message.replace(/\.$/, '');
    throw usageError(`invalid ${name} ${JSON.stringify(value)}`, rule.charAt(0).toLowerCase() + rule.slice(1));
  }
  return value.trim();
}

function normalizeBaseUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw usageError(`invalid base URL ${JSON.stringify(input)}`, 'use an http:// or https:// address such as https://api.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw usageError(`invalid base URL ${JSON.stringify(input)}: only http and https are supported`);
  }
  if (url.search || url.hash) throw usageError(`invalid base URL ${JSON.stringify(input)}: drop the query or fragment`);
  if (url.username || url.password) throw usageError('invalid base URL: credentials in the URL are not supported; use config set api-key');
  return url.href.replace(/\/+$/, '');
}

/**
 * Shows enough of a key to tell keys apart, never enough to use it. A URL (the notify
 * setting) keeps its scheme and host, which are no secret, and masks the rest as a key.
 */
export function maskSecret(value: string): string {
  // Not when the address holds credentials (user:pass@): all of it is then masked as a key.
  const origin = /^https?:\/\/[^/?#@\s]+(?=[/?#]|$)/i.exec(value)?.[0];
  if (origin) return `${origin}/${maskSecret(value.slice(origin.length).replace(/^\//, ''))}`;
  return value.length <= 8 ? '****' : `****${value.slice(-4)}`;
}

/**
 * Where the config file is: `$SGQ_CONFIG_DIR/config.json`, else the platform's config folder
 * (the one conf would choose, so existing files stay where they are). Undefined when there
 * is no home folder to put it in (HOME unset and a user id the system does not know, as in
 * some containers): runs then take every setting from flags and the environment.
 */
export function configPath(env: Env): string | undefined {
  const dir = env.SGQ_CONFIG_DIR || platformConfigDir(env);
  return dir === undefined ? undefined : join(dir, 'config.json');
}

function platformConfigDir(env: Env): string | undefined {
  if (platform() !== 'darwin' && platform() !== 'win32' && env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'sgq');
  const home = env.HOME || knownHome();
  if (home === undefined) return undefined;
  if (platform() === 'darwin') return join(home, 'Library', 'Preferences', 'sgq');
  if (platform() === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'sgq', 'Config');
  return join(home, '.config', 'sgq');
}

/** The home folder from the user database; os.homedir throws when HOME is unset and there is none. */
function knownHome(): string | undefined {
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}

/** The profiles in the config file. Reading never creates or changes anything; only `set` and `unset` write. */
export class ConfigStore {
  private readonly file?: string;
  /** The profiles as last read or written. */
  private snapshot?: StoreShape['profiles'];

  constructor(env: Env) {
    this.file = configPath(env);
  }

  get path(): string {
    if (this.file === undefined) {
      throw configError('there is no place for the config file: HOME is not set and the system knows no home folder for this user', 'set HOME, or SGQ_CONFIG_DIR to a folder of your own');
    }
    return this.file;
  }

  profileNames(): string[] {
    return Object.keys(this.profiles());
  }

  profile(name: string): Partial<Record<SettingName, string>> {
    return this.profiles()[name] ?? {};
  }

  async set(profile: string, name: SettingName, value: string): Promise<void> {
    const profiles = this.profiles();
    profiles[profile] = { ...profiles[profile], [name]: value };
    await this.write(profiles);
  }

  /** Returns whether there was anything to remove. */
  async unset(profile: string, name: SettingName): Promise<boolean> {
    const profiles = this.profiles();
    const current = profiles[profile];
    if (!current || current[name] === undefined) return false;
    delete current[name];
    if (Object.keys(current).length === 0) delete profiles[profile];
    await this.write(profiles);
    return true;
  }

  /** A copy of every profile, which the caller may change and pass to `write`. */
  private profiles(): StoreShape['profiles'] {
    this.snapshot ??= this.read();
    return structuredClone(this.snapshot);
  }

  private read(): StoreShape['profiles'] {
    if (this.file === undefined) return {};
    const fix = `fix or delete ${this.path}`;
    let text: string;
    try {
      // Never a blocking read: a FIFO or a device in its place is refused at once.
      text = readRegularFile(this.path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // No file (or a parent that is a file, not a folder): no settings yet.
      if (code === 'ENOENT' || code === 'ENOTDIR') return {};
      throw fileError(error, { what: `cannot read the config file ${this.path}`, exitCode: ExitCode.config });
    }
    let data: unknown;
    try {
      data = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      throw configError(`the config file ${this.path} is not valid JSON`, fix);
    }
    const profiles = isRecord(data) ? (data.profiles ?? {}) : undefined;
    if (!isRecord(profiles) || !Object.values(profiles).every(isRecord)) {
      throw configError(`the config file ${this.path} does not hold {"profiles": {NAME: {SETTING: VALUE}}}`, fix);
    }
    // A hand-edited file may hold numbers (`"timeout": 30`); they are read as the text they show.
    const read: Record<string, Record<string, unknown>> = {};
    for (const [name, settings] of Object.entries(profiles as Record<string, Record<string, unknown>>)) {
      read[name] = { ...settings };
      for (const key of Object.keys(settings).filter(isSettingName)) {
        const value = settings[key];
        if (typeof value !== 'string' && typeof value !== 'number') {
          throw configError(`the config file ${this.path} holds a ${key} that is neither text nor a number (profile ${name})`, fix);
        }
        read[name][key] = String(value);
      }
    }
    return read as StoreShape['profiles'];
  }

  private async write(profiles: StoreShape['profiles']): Promise<void> {
    const path = this.path;
    try {
      // conf writes atomically; the folder is made here, as every folder of sgq's, its owner's
      // alone (conf would make it as the umask says). conf is loaded only to write: loading it
      // asks for the home folder, which a run without one must not need.
      makePrivateFolder(dirname(path));
      const { default: Conf } = await import('conf');
      const conf = new Conf<StoreShape>({ cwd: dirname(path), configName: 'config', configFileMode: 0o600, accessPropertiesByDotNotation: false });
      conf.set('profiles', profiles);
      // conf applies the mode when it creates the file; make sure an older file is tightened too.
      chmodSync(path, 0o600);
    } catch (error) {
      if (error instanceof SgqError) throw error;
      throw fileError(error, { what: `cannot write the config file ${path}`, exitCode: ExitCode.config, then: 'SGQ_CONFIG_DIR chooses another folder' });
    }
    this.snapshot = profiles;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface GlobalFlags {
  profile?: string;
  baseUrl?: string;
}

/** The environment variable or the profile an API key was read from. */
export type KeySource = { env: string } | { profile: string };

export interface ResolvedConfig {
  profile: string;
  /** The base URL: flag, environment, profile, else DEFAULT_BASE_URL. */
  baseUrl: string;
  apiKey?: string;
  /** Where the key came from, named when the service rejects it. */
  apiKeySource?: KeySource;
  output?: string;
  timeout?: string;
  retries?: string;
  snapshotDir?: string;
  dataset?: string;
  parallel?: string;
  warnCredits?: string;
  cache?: string;
  /** `route=credits` pairs, checked by parsePrices. */
  prices?: string;
  /** The account's plan, when the user states it. */
  plan?: Plan;
  /** `route=requests` pairs, checked by parseRateLimits. */
  rateLimits?: string;
  /** `true` or `false`. */
  bigintAsString?: string;
  /** The URL --snapshot runs post their changes to (a secret, like the key). */
  notify?: string;
  /** A positive integer: snapshots in a row an account must be missing from to count as lost. */
  confirmLost?: string;
  /** A positive integer: a user's whole list is fetched every this many --snapshot runs. */
  fullEvery?: string;
  store?: ConfigStore;
}

/**
 * The settings of a --sandbox run: the profile's `dataset` and `snapshot-dir` name the state of
 * the service the profile points at, and its `notify` that service's channel, so they do not
 * apply; the environment's still do (a script's own choice, which the dataset's service check
 * then guards).
 */
export function sandboxConfig(config: ResolvedConfig, env: Env): ResolvedConfig {
  const fromEnv = (name: SettingName, value: string | undefined) => (env[SETTINGS[name].env] ? value : undefined);
  // The profile's notify URL is the real account's channel: synthetic churn is not posted there.
  return { ...config, dataset: fromEnv('dataset', config.dataset), snapshotDir: fromEnv('snapshot-dir', config.snapshotDir), notify: fromEnv('notify', config.notify) };
}

/** A setting from the environment alone, checked as resolveConfig checks it (`sgq fmt` reads no profile). */
export function envSetting(name: SettingName, env: Env): string | undefined {
  const variable = SETTINGS[name].env;
  if (!env[variable]) return undefined;
  try {
    return validateSetting(name, env[variable]);
  } catch (error) {
    if (!(error instanceof SgqError)) throw error;
    throw configError(`${error.message} (from ${variable})`, error.hint ?? `fix or unset ${variable}`);
  }
}

/** The profile a run uses: `--profile`, else SGQ_PROFILE, else the default one. */
export function profileName(flags: Pick<GlobalFlags, 'profile'>, env: Env): string {
  return flags.profile || env.SGQ_PROFILE || DEFAULT_PROFILE;
}

/** ` --profile NAME` for a command in a hint, when the run is not on the default profile. */
export function profileFlag(profile: string): string {
  return profile === DEFAULT_PROFILE ? '' : ` --profile ${profile}`;
}

/** Applies the precedence rules: flag > environment > profile > default. */
export function resolveConfig(flags: GlobalFlags, env: Env): ResolvedConfig {
  const profile = profileName(flags, env);
  const store = new ConfigStore(env);
  const stored = store.profile(profile);
  if (profile !== DEFAULT_PROFILE && !store.profileNames().includes(profile)) {
    throw configError(`no profile named ${JSON.stringify(profile)}`, 'create it in the config store first (set its base-url)', { fix: 'create-profile', profile });
  }
  const source = (name: SettingName, flag?: string): KeySource | undefined =>
    flag ? undefined : env[SETTINGS[name].env] ? { env: SETTINGS[name].env } : stored[name] !== undefined ? { profile } : undefined;
  // Values from the environment or a hand-edited file get the same checks as `config set`;
  // a bad one is a configuration problem (exit 3) that names where it came from.
  const pick = (name: SettingName, flag?: string): string | undefined => {
    const value = flag || env[SETTINGS[name].env] || stored[name] || undefined;
    if (value === undefined) return undefined;
    try {
      return validateSetting(name, value);
    } catch (error) {
      const from = source(name, flag);
      if (!from || !(error instanceof SgqError)) throw error;
      const [where, fix] = 'env' in from ? [from.env, `fix or unset ${from.env}`] : [`profile ${from.profile} of ${store.path}`, `fix the setting ${name} of that profile`];
      const details = error.hint || 'env' in from ? {} : { fix: 'fix-setting' as const, setting: name, profile };
      throw configError(`${error.message} (from ${where})`, error.hint ?? fix, details);
    }
  };
  const apiKey = pick('api-key');
  return {
    profile,
    baseUrl: pick('base-url', flags.baseUrl) ?? DEFAULT_BASE_URL,
    apiKey,
    apiKeySource: apiKey === undefined ? undefined : source('api-key'),
    output: pick('output'),
    timeout: pick('timeout'),
    retries: pick('retries'),
    snapshotDir: pick('snapshot-dir'),
    dataset: pick('dataset'),
    parallel: pick('parallel'),
    warnCredits: pick('warn-credits'),
    cache: pick('cache'),
    prices: pick('prices'),
    plan: pick('plan') as Plan | undefined,
    rateLimits: pick('rate-limits'),
    bigintAsString: pick('bigint-as-string'),
    notify: pick('notify'),
    confirmLost: pick('confirm-lost'),
    fullEvery: pick('full-every'),
    store,
  };
}
