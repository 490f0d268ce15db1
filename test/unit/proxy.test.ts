import { describe, expect, it } from 'vitest';
import { bypassed, maskedProxy, proxyFor } from '../../src/core/proxy.js';

const HTTP = new URL('http://api.example.com:8080/v1');
const HTTPS = new URL('https://api.example.com/v1');

const chosen = (env: Record<string, string>, target: URL) => {
  const choice = proxyFor(env, target);
  return choice && { url: choice.url.href, source: choice.source };
};

describe('which proxy a target goes through', () => {
  it('takes the scheme’s own variable, lower case first, then ALL_PROXY', () => {
    expect(chosen({ http_proxy: 'http://a:1', HTTP_PROXY: 'http://b:2' }, HTTP)).toEqual({ url: 'http://a:1/', source: 'http_proxy' });
    expect(chosen({ HTTP_PROXY: 'http://b:2' }, HTTP)).toEqual({ url: 'http://b:2/', source: 'HTTP_PROXY' });
    expect(chosen({ https_proxy: 'http://a:1', HTTPS_PROXY: 'http://b:2' }, HTTPS)).toEqual({ url: 'http://a:1/', source: 'https_proxy' });
    expect(chosen({ all_proxy: 'http://c:3', ALL_PROXY: 'http://d:4' }, HTTPS)).toEqual({ url: 'http://c:3/', source: 'all_proxy' });
    expect(chosen({ ALL_PROXY: 'http://d:4', HTTPS_PROXY: 'http://b:2' }, HTTPS)?.source).toBe('HTTPS_PROXY');
  });

  it('never crosses schemes: HTTP_PROXY is not used for https:// nor HTTPS_PROXY for http://', () => {
    expect(chosen({ HTTP_PROXY: 'http://a:1', http_proxy: 'http://a:1' }, HTTPS)).toBeUndefined();
    expect(chosen({ HTTPS_PROXY: 'http://a:1', https_proxy: 'http://a:1' }, HTTP)).toBeUndefined();
  });

  it('treats an empty variable as unset', () => {
    expect(chosen({ https_proxy: '', HTTPS_PROXY: 'http://b:2' }, HTTPS)?.source).toBe('HTTPS_PROXY');
    expect(chosen({ HTTPS_PROXY: '', ALL_PROXY: '' }, HTTPS)).toBeUndefined();
    expect(chosen({ HTTPS_PROXY: 'http://b:2', no_proxy: '', NO_PROXY: '*' }, HTTPS)).toBeUndefined();
  });

  it('reads a proxy without a scheme or port as curl does (http://, port 1080; 443 for https://)', () => {
    expect(chosen({ HTTPS_PROXY: 'proxy.corp' }, HTTPS)?.url).toBe('http://proxy.corp:1080/');
    expect(chosen({ HTTPS_PROXY: 'https://proxy.corp' }, HTTPS)?.url).toBe('https://proxy.corp/');
    expect(chosen({ HTTPS_PROXY: 'http://proxy.corp:80' }, HTTPS)?.url).toBe('http://proxy.corp/');
  });

  it('refuses a proxy it cannot use, naming the variable and never the password', () => {
    expect(() => proxyFor({ HTTPS_PROXY: 'socks5://u:hunter2@h:1' }, HTTPS)).toThrow(/HTTPS_PROXY names a socks5 proxy/);
    let message = '';
    try {
      proxyFor({ ALL_PROXY: 'http://u:hunter2@[bad' }, HTTPS);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('ALL_PROXY is not a proxy URL');
    expect(message).not.toContain('hunter2');
  });

  it('lower-case no_proxy wins over NO_PROXY', () => {
    expect(chosen({ HTTPS_PROXY: 'http://b:2', no_proxy: 'other.org', NO_PROXY: 'example.com' }, HTTPS)).toBeDefined();
    expect(chosen({ HTTPS_PROXY: 'http://b:2', NO_PROXY: 'example.com' }, HTTPS)).toBeUndefined();
  });
});

describe('NO_PROXY by curl’s rules', () => {
  const host = (h: string, scheme = 'https') => new URL(`${scheme}://${h}/`);
  it.each([
    ['*', 'anything.org', true],
    [' * ', 'anything.org', true],
    ['example.com', 'example.com', true],
    ['example.com', 'api.example.com', true],
    ['.example.com', 'api.example.com', true],
    ['.example.com', 'example.com', true],
    ['example.com.', 'api.example.com', true],
    ['example.com', 'notexample.com', false],
    ['api.example.com', 'example.com', false],
    ['EXAMPLE.com', 'Api.Example.COM', true],
    ['a.org, example.com', 'example.com', true],
    ['a.org example.com', 'example.com', true],
    ['a.org,,b.org', 'example.com', false],
    ['*.example.com', 'api.example.com', false],
    ['example.com:443', 'example.com', true],
    ['example.com:8443', 'example.com', false],
    ['example.com:8443', 'example.com:8443', true],
    ['127.0.0.1', '127.0.0.1', true],
    ['127.0.0.1', '127.0.0.10', false],
    ['127.0.0.0/8', '127.1.2.3', true],
    ['10.0.0.0/8', '127.1.2.3', false],
    ['::1', '[::1]', true],
    ['[::1]', '[::1]', true],
    ['fd00::/8', '[fd12::1]', true],
    ['localhost', '127.0.0.1', false],
    ['', 'example.com', false],
  ])('%j for %s → %s', (list, target, expected) => {
    expect(bypassed(list, host(target))).toBe(expected);
  });

  it('uses the scheme’s default port for host:port', () => {
    expect(bypassed('example.com:80', host('example.com', 'http'))).toBe(true);
    expect(bypassed('example.com:80', host('example.com', 'https'))).toBe(false);
  });
});

describe('printing a proxy', () => {
  it('masks credentials', () => {
    expect(maskedProxy(new URL('http://user:pass@proxy:3128'))).toBe('http://****@proxy:3128');
    expect(maskedProxy(new URL('http://proxy:3128'))).toBe('http://proxy:3128');
    expect(maskedProxy('user:pass@proxy:3128')).toBe('****@proxy:3128');
    expect(maskedProxy('http://user:pass@proxy:3128')).toBe('http://****@proxy:3128');
  });
});
