import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { ROUTES } from '../../src/core/routes.js';
import { requestBody, routeRequest } from '../../src/core/request-body.js';
import { resolveClientSettings, typedSettings } from '../../src/core/settings.js';
import { createContext } from '../../src/cli/program/context.js';
import type { Io } from '../../src/cli/start/io.js';

// The core's public wiring, which createClient and the CLI both stand on, and the CLI's context.

const route = (path: string) => ROUTES.find((r) => r.path === path)!;

describe('requestBody', () => {
  it('is the spec body {user, how, page, since}, each field only where it applies', () => {
    const followers = route('graph/get_followers');
    expect(requestBody(followers, { user: 'jack', how: 'username', page: 2, since: '2024-04-07T00:00:00Z' })).toEqual({ user: 'jack', how: 'username', page: 2, since: '2024-04-07T00:00:00Z' });
    expect(requestBody(followers, { user: 'jack', how: 'username', page: 1 })).toEqual({ user: 'jack', how: 'username', page: 1 });
    expect(requestBody(route('metadata/get_userid'), { user: 'jack', how: 'username', page: null })).toEqual({ user: 'jack', how: 'username' });
    expect(requestBody(route('info'), { user: null, how: 'username', page: null })).toEqual({});
  });

  it('sends page 1 to the routes without pages whose public clients send it (an assumption, said in requests.md)', () => {
    const count = route('metadata/get_follower_count');
    expect(count.paginated).toBe(false);
    expect(requestBody(count, { user: '12', how: 'userid', page: null })).toEqual({ user: '12', how: 'userid', page: 1 });
    const req = routeRequest(count, { user: '12', how: 'userid', since: undefined }, { startPage: 1, follow: false });
    expect(req.payload(null)).toEqual({ user: '12', how: 'userid', page: 1 });
    // The routes sgq had before keep the body they had.
    expect(routeRequest(route('metadata/get_latest_tweets'), { user: 'jack', how: 'username' }, { startPage: 1, follow: false }).payload(null)).toEqual({ user: 'jack', how: 'username' });
  });

  it('routeRequest builds the page template from it', () => {
    const req = routeRequest(route('graph/get_following'), { user: 'jack', how: 'username', since: undefined }, { startPage: 3, follow: true });
    expect(req).toMatchObject({ path: 'graph/get_following', sendKey: true, paginated: true, startPage: 3, follow: true, wholeBodyIsRecord: false });
    expect(req.payload(4)).toEqual({ user: 'jack', how: 'username', page: 4 });
  });
});

describe('client settings', () => {
  it('are typed once: given over config over defaults, the Retry-After cap from the environment', () => {
    const config = { profile: 'default', baseUrl: 'http://127.0.0.1:9', timeout: '12.5', retries: '5', parallel: '4', cache: '1h' };
    expect(typedSettings(config)).toEqual({ timeoutMs: 12_500, retries: 5, parallel: 4, warnCredits: undefined, cacheMs: 3_600_000 });
    const endpoint = { baseUrl: 'http://127.0.0.1:9' };
    expect(resolveClientSettings(endpoint, {}, config, {})).toMatchObject({ timeoutMs: 12_500, retries: 5, maxRetryAfterMs: 60_000 });
    expect(resolveClientSettings(endpoint, { timeoutMs: 1000, retries: 0 }, config, { SGQ_RETRY_AFTER_CAP: '2' })).toMatchObject({ timeoutMs: 1000, retries: 0, maxRetryAfterMs: 2000 });
    expect(resolveClientSettings(endpoint, {}, undefined, {})).toMatchObject({ timeoutMs: 30_000, retries: 3 });
    expect(() => resolveClientSettings(endpoint, {}, undefined, { SGQ_RETRY_AFTER_CAP: 'soon' })).toThrow(/SGQ_RETRY_AFTER_CAP/);
  });
});

describe('the CLI context', () => {
  const io = (env: Record<string, string | undefined>): Io => ({ stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false });

  it('resolves the config on first use, once', () => {
    // A profile that does not exist fails only when the config is read.
    const ctx = createContext(io({ SGQ_CONFIG_DIR: '/nonexistent-sgq', SGQ_BASE_URL: 'http://127.0.0.1:9' }), { profile: 'nope' }, () => new Command());
    expect(() => ctx.config).toThrow(/no profile named "nope"/);
    const ok = createContext(io({ SGQ_CONFIG_DIR: '/nonexistent-sgq', SGQ_BASE_URL: 'http://127.0.0.1:9' }), {}, () => new Command());
    expect(ok.config.baseUrl).toBe('http://127.0.0.1:9');
    expect(ok.config).toBe(ok.config);
  });

  it('gives one reporter, and writes records to stdout in the chosen format', async () => {
    const streams = io({ SGQ_CONFIG_DIR: '/nonexistent-sgq' });
    const ctx = createContext(streams, {}, () => new Command());
    expect(await ctx.reporter()).toBe(await ctx.reporter());
    let out = '';
    streams.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const { format, formatter, sink } = await ctx.output({ output: 'csv' });
    formatter.write([{ a: 1, b: 'x' }]);
    formatter.end();
    await sink.drain();
    expect(format).toBe('csv');
    expect(out).toBe('a,b\r\n1,x\r\n');
  });
});
