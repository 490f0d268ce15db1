import { BlockList, isIP } from 'node:net';
import { configError } from './errors.js';

/** The proxy a run goes through, and the variable that named it (for messages). */
export interface ProxyChoice {
  url: URL;
  /** The environment variable the proxy came from, e.g. `HTTPS_PROXY`. */
  source: string;
}

/**
 * The proxy for `target`, read from the environment the way curl reads it: the scheme's own
 * variable in lower case, then upper case, then `all_proxy`/`ALL_PROXY`; an empty variable
 * counts as unset. Unlike curl, `HTTP_PROXY` is honoured too (curl ignores it because a CGI
 * script receives a client's `Proxy:` header as HTTP_PROXY; sgq is not run as CGI).
 * `no_proxy`/`NO_PROXY` lists the hosts reached directly.
 */
export function proxyFor(env: Record<string, string | undefined>, target: URL): ProxyChoice | undefined {
  const scheme = target.protocol.replace(/:$/, '');
  const source = [`${scheme}_proxy`, `${scheme.toUpperCase()}_PROXY`, 'all_proxy', 'ALL_PROXY'].find((name) => env[name]);
  if (!source) return undefined;
  if (bypassed(env.no_proxy || env.NO_PROXY || '', target)) return undefined;
  return { url: parseProxy(env[source]!.trim(), source), source };
}

/** A proxy URL as curl takes it: the scheme defaults to http://, the port to 1080 (443 for https://). */
function parseProxy(value: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw configError(`${source} is not a proxy URL: ${maskedProxy(value)}`, `set ${source} to http://HOST:PORT, or unset it`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw configError(`${source} names a ${url.protocol.slice(0, -1)} proxy, which sgq does not support`, `use an http:// or https:// proxy, or unset ${source}`);
  }
  // URL drops a scheme's default port: an explicit :80 reads as no port, and stays 80.
  if (url.protocol === 'http:' && !url.port && !/:\d+\/?$/.test(value)) url.port = '1080';
  return url;
}

/**
 * Whether `no_proxy` sends `target` around the proxy, by curl's rules: `*` alone matches every
 * host; otherwise a comma- or blank-separated list where a name matches itself and its
 * subdomains (a leading dot is ignored: `.example.com` and `example.com` both match
 * `api.example.com`, never `notexample.com`), and an IP address matches itself or, with `/bits`,
 * its network. Beyond curl, `host:port` matches that host on that port only.
 */
export function bypassed(noProxy: string, target: URL): boolean {
  const list = noProxy.trim();
  if (list === '*') return true;
  const host = target.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  const ipVersion = isIP(host);
  return list.split(/[\s,]+/).some((token) => {
    if (!token) return false;
    let pattern = token.toLowerCase();
    const withPort = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(pattern);
    if (withPort) {
      if (withPort[2] !== port) return false;
      pattern = withPort[1]!;
    }
    pattern = pattern.replace(/^\[|\]$/g, '');
    if (ipVersion) return ipMatches(host, ipVersion, pattern);
    pattern = pattern.replace(/^\./, '').replace(/\.$/, '');
    return pattern !== '' && (host === pattern || host.endsWith(`.${pattern}`));
  });
}

function ipMatches(host: string, version: number, pattern: string): boolean {
  const [address = '', bitsText] = pattern.split('/');
  const family = version === 6 ? 'ipv6' : 'ipv4';
  if (isIP(address) !== version) return false;
  const bits = bitsText === undefined ? (version === 6 ? 128 : 32) : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > (version === 6 ? 128 : 32)) return false;
  const list = new BlockList();
  list.addSubnet(address, bits, family);
  return list.check(host, family);
}

/** A proxy URL fit to print: scheme, host and port, with any credentials masked. */
export function maskedProxy(value: string | URL): string {
  if (typeof value === 'string') return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@]*@/i, '$1****@');
  return `${value.protocol}//${value.username || value.password ? '****@' : ''}${value.host}`;
}
