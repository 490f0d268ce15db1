import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { ConfigStore, SETTINGS, SETTING_DEFAULTS, SETTING_NAMES, isSettingName, maskSecret, profileFlag, profileName, validateSetting, type SettingName } from '../../../core/config.js';
import { ExitCode, SgqError, usageError } from '../../../core/errors.js';
import type { Io } from '../../start/io.js';
import { visible } from '../../terminal/visible.js';
import { textUntilStopped } from '../../input/stdin-chunks.js';
import type { CommandContext, GlobalOptions } from '../../program/context.js';

export interface ConfigOptions {
  output?: 'text' | 'json';
}

/** `sgq config set|get|unset|list|path`. Data (values, paths) on stdout; confirmations on stderr. */
export async function runConfigCommand(ctx: CommandContext, verb: string, args: string[], opts: ConfigOptions = {}): Promise<number> {
  const { io, globals } = ctx;
  const store = new ConfigStore(io.env);
  const profile = profileName(globals, io.env);
  const say = (line: string) => {
    if (!globals.quiet) io.stderr.write(`${visible(line)}\n`);
  };

  switch (verb) {
    case 'path':
      io.stdout.write(`${store.path}\n`);
      return ExitCode.ok;
    case 'list': {
      if (opts.output === 'json') {
        io.stdout.write(`${JSON.stringify(settingsDocument(store, profile, io.env, globals), null, 2)}\n`);
        return ExitCode.ok;
      }
      const values = store.profile(profile);
      for (const name of SETTING_NAMES) {
        const value = values[name] ?? SETTING_DEFAULTS[name];
        if (value !== undefined) io.stdout.write(`${name}=${shown(name, value)}\n`);
        if (values[name] === undefined && value !== undefined) say(defaultNote(name, profile, value));
      }
      const others = store.profileNames().filter((p) => p !== profile);
      if (others.length) say(`other profiles: ${others.join(', ')} (use --profile NAME)`);
      return ExitCode.ok;
    }
    case 'get': {
      const name = settingName(args[0]);
      const value = store.profile(profile)[name];
      const fallback = SETTING_DEFAULTS[name];
      if (value === undefined && fallback === undefined) {
        say(`${name} is not set in profile ${profile}`);
        return ExitCode.config;
      }
      if (value === undefined) say(defaultNote(name, profile, fallback!));
      io.stdout.write(`${shown(name, value ?? fallback!)}\n`);
      return ExitCode.ok;
    }
    case 'unset': {
      const name = settingName(args[0]);
      say((await store.unset(profile, name)) ? `removed ${name} from profile ${profile}` : `${name} was not set in profile ${profile}`);
      return ExitCode.ok;
    }
    case 'set': {
      const name = settingName(args[0]);
      if (SETTINGS[name].secret && args[1] !== undefined) {
        const [what, variable] = name === 'api-key' ? ['a key', 'KEY'] : ['a secret', 'URL'];
        throw usageError(`config set ${name} takes no value argument: ${what} on the command line stays in shell history and shows in ps`, `pipe it in instead: printf %s "$${variable}" | sgq config set ${name}${profileFlag(profile)}`);
      }
      const given = args[1] ?? (await readValue(io, name, profile));
      const value = validateSetting(name, given);
      await store.set(profile, name, value);
      say(`set ${name} in profile ${profile} (${store.path})`);
      return ExitCode.ok;
    }
    default:
      throw usageError(`unknown config command ${verb}`);
  }
}

/** Said on stderr where a value shown is sgq's default, not the profile's. */
const defaultNote = (name: SettingName, profile: string, value: string) => `${name} is not set in profile ${profile}: ${value} is sgq's default`;

/** The global flags that set a setting for one run. */
const SETTING_FLAGS: Partial<Record<SettingName, { flag: string; value: (g: GlobalOptions) => string | number | undefined }>> = {
  'base-url': { flag: '--base-url', value: (g) => g.baseUrl },
  timeout: { flag: '--timeout', value: (g) => g.timeout },
  retries: { flag: '--retries', value: (g) => g.retries },
};

/**
 * `config list -o json`: every setting, the value a run would take (flag > environment >
 * profile > the setting's `default`, source "default"; null when none is set and sgq
 * decides at run time) and where it comes from.
 */
function settingsDocument(store: ConfigStore, profile: string, env: Io['env'], globals: GlobalOptions) {
  const stored = store.profile(profile);
  const settings = SETTING_NAMES.map((name) => {
    const { value, source, flag } = settingSource(name, stored[name], env, globals);
    const fallback = SETTING_DEFAULTS[name];
    const [taken, from] = value === undefined && fallback !== undefined ? [fallback, 'default'] : [value, source];
    return {
      name,
      value: taken === undefined ? null : shown(name, taken),
      source: from,
      ...(flag ? { flag } : {}),
      ...(fallback !== undefined ? { default: fallback } : {}),
      env: SETTINGS[name].env,
      secret: SETTINGS[name].secret,
    };
  });
  return { profile, config_file: store.path ?? null, settings, other_profiles: store.profileNames().filter((p) => p !== profile) };
}

function settingSource(name: SettingName, stored: string | undefined, env: Io['env'], globals: GlobalOptions) {
  const flag = SETTING_FLAGS[name];
  const flagValue = flag?.value(globals);
  if (flag && flagValue !== undefined) return { value: String(flagValue), source: 'flag', flag: flag.flag };
  const fromEnv = env[SETTINGS[name].env] || undefined;
  if (fromEnv !== undefined) return { value: fromEnv, source: 'environment' };
  if (stored !== undefined) return { value: stored, source: 'profile' };
  return { value: undefined, source: null };
}

const shown = (name: SettingName, value: string) => (SETTINGS[name].secret ? maskSecret(value) : value);

function settingName(name: string | undefined): SettingName {
  if (name && isSettingName(name)) return name;
  throw usageError(`unknown setting ${JSON.stringify(name ?? '')}`, `use one of ${SETTING_NAMES.join(', ')}`);
}

/** The value from stdin: a hidden prompt on a terminal, else the first line of the pipe. */
async function readValue(io: Io, name: SettingName, profile: string): Promise<string> {
  if (!io.stdinIsTTY) {
    const input = (await textUntilStopped(io.stdin, io.signal)).split(/\r?\n/)[0] ?? '';
    const way = `printf %s "$VALUE" | sgq config set ${name}${profileFlag(profile)}`;
    if (!input.trim()) throw usageError(`no value for ${name} on stdin`, SETTINGS[name].secret ? `pipe it in: ${way}` : `give it as an argument or pipe it in: ${way}`);
    return input;
  }
  return hiddenPrompt(io, `${name}: `);
}

function hiddenPrompt(io: Io, question: string): Promise<string> {
  io.stderr.write(question);
  // Echo nothing of what is typed; the key must not appear on screen.
  const silent = new Writable({ write: (_chunk, _enc, done) => done() });
  const rl = createInterface({ input: io.stdin, output: silent, terminal: true });
  return new Promise((resolve, reject) => {
    rl.once('line', (line) => {
      rl.close();
      io.stderr.write('\n');
      resolve(line);
    });
    rl.once('SIGINT', () => {
      rl.close();
      io.stderr.write('\n');
      reject(new SgqError(ExitCode.interrupted, 'cancelled; nothing was stored'));
    });
  });
}
