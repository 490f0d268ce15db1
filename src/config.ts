import { chmodSync } from 'node:fs';
import Conf from 'conf';
import { configError, usageError } from './errors.js';
import type { Io } from './io.js';
import { FORMATS } from './output/format-names.js';

// The config store: named profiles of settings in one JSON file (mode 0600, since it holds
// API keys). Precedence for every setting: flag > environment > profile > default.

export const SETTINGS = {
  'api-key': { env: 'SGQ_API_KEY', secret: true, describe: 'API key sent as x-api-key' },
  'base-url': { env: 'SGQ_BASE_URL', secret: false, describe: 'service address, may carry a path prefix' },
  output: { env: 'SGQ_OUTPUT', secret: false, describe: 'default output format when stdout is not a terminal' },
  timeout: { env: 'SGQ_TIMEOUT', secret: false, describe: 'seconds per request' },
  retries: { env: 'SGQ_RETRIES', secret: false, describe: 'retries of a transient failure' },
} as const;

export type SettingName = keyof typeof SETTINGS;
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
    case 'timeout':
      if (!(Number(v) > 0)) throw usageError(`invalid timeout ${JSON.stringify(value)}`, 'use a number of seconds greater than 0');
      return v;
    case 'retries':
      if (!/^\d+$/.test(v) || Number(v) > 20) throw usageError(`invalid retries ${JSON.stringify(value)}`, 'use a whole number from 0 to 20');
      return v;
    case 'api-key':
      if (!v || /\s/.test(v)) throw usageError('invalid api-key: it is empty or holds white space');
      return v;
  }
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

/** Shows enough of a key to tell keys apart, never enough to use it. */
export function maskSecret(value: string): string {
  return value.length <= 8 ? '****' : `****${value.slice(-4)}`;
}

export class ConfigStore {
  private readonly conf: Conf<StoreShape>;
  /** The profiles as last read or written: conf reads the whole file on every get. */
  private snapshot?: StoreShape['profiles'];

  constructor(env: Io['env']) {
    const cwd = env.SGQ_CONFIG_DIR || undefined;
    try {
      this.conf = new Conf<StoreShape>({
        projectName: 'sgq',
        projectSuffix: '',
        ...(cwd ? { cwd } : {}),
        configFileMode: 0o600,
        defaults: { profiles: {} },
        accessPropertiesByDotNotation: false,
      });
    } catch (error) {
      throw configError(
        `cannot read the config file: ${error instanceof Error ? error.message : String(error)}`,
        'fix or delete the file shown by `sgq config path`',
      );
    }
  }

  get path(): string {
    return this.conf.path;
  }

  profileNames(): string[] {
    return Object.keys(this.profiles());
  }

  profile(name: string): Partial<Record<SettingName, string>> {
    return this.profiles()[name] ?? {};
  }

  set(profile: string, name: SettingName, value: string): void {
    const profiles = this.profiles();
    profiles[profile] = { ...profiles[profile], [name]: value };
    this.write(profiles);
  }

  /** Returns whether there was anything to remove. */
  unset(profile: string, name: SettingName): boolean {
    const profiles = this.profiles();
    const current = profiles[profile];
    if (!current || current[name] === undefined) return false;
    delete current[name];
    if (Object.keys(current).length === 0) delete profiles[profile];
    this.write(profiles);
    return true;
  }

  /** A copy of every profile, which the caller may change and pass to `write`. */
  private profiles(): StoreShape['profiles'] {
    if (!this.snapshot) {
      const profiles = this.conf.get('profiles');
      this.snapshot = profiles && typeof profiles === 'object' ? profiles : {};
    }
    return structuredClone(this.snapshot);
  }

  private write(profiles: StoreShape['profiles']): void {
    this.conf.set('profiles', profiles);
    this.snapshot = profiles;
    // conf applies the mode when it creates the file; make sure an older file is tightened too.
    chmodSync(this.conf.path, 0o600);
  }
}

export interface GlobalFlags {
  profile?: string;
  baseUrl?: string;
}

export interface ResolvedConfig {
  profile: string;
  baseUrl?: string;
  apiKey?: string;
  output?: string;
  timeout?: string;
  retries?: string;
  store?: ConfigStore;
}

/** The profile a run uses: `--profile`, else SGQ_PROFILE, else the default one. */
export function profileName(flags: Pick<GlobalFlags, 'profile'>, env: Io['env']): string {
  return flags.profile || env.SGQ_PROFILE || DEFAULT_PROFILE;
}

/** Applies the precedence rules: flag > environment > profile > default. */
export function resolveConfig(flags: GlobalFlags, env: Io['env']): ResolvedConfig {
  const profile = profileName(flags, env);
  const store = new ConfigStore(env);
  const stored = store.profile(profile);
  if (profile !== DEFAULT_PROFILE && !store.profileNames().includes(profile)) {
    throw configError(`no profile named ${JSON.stringify(profile)}`, `create it with \`sgq config set base-url URL --profile ${profile}\``);
  }
  // Values from the environment or a hand-edited file get the same checks as `config set`.
  const pick = (name: SettingName, flag?: string): string | undefined => {
    const value = flag || env[SETTINGS[name].env] || stored[name] || undefined;
    return value === undefined ? undefined : validateSetting(name, value);
  };
  return {
    profile,
    baseUrl: pick('base-url', flags.baseUrl),
    apiKey: pick('api-key'),
    output: pick('output'),
    timeout: pick('timeout'),
    retries: pick('retries'),
    store,
  };
}
