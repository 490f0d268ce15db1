import { existsSync, readFileSync } from 'node:fs';
import type { Pool, buildConnector } from 'undici';
import type { ProxyChoice } from './proxy.js';
import { NodeTransport, UndiciTransport, type Transport } from './transport.js';

// The keep-alive pool a client (client.ts) or a notification (webhook.ts) calls an origin
// through: node:http or undici, through the run's proxy, trusting the system's CAs too. Kept
// apart from client.ts so that the library's types (client.d.ts) do not name undici's, which
// the package bundles.

/** The code of a connection the proxy closed: final for the requests waiting on it (failingFast). */
export const PROXY_CLOSED = 'SGQ_PROXY_CLOSED';

const SYSTEM_CA_FILES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'];

/**
 * Node's bundled roots, the system's bundle (so a corporate CA installed in the OS works)
 * and NODE_EXTRA_CA_CERTS, which an explicit `ca` list would otherwise drop.
 */
async function trustedCas(env: Record<string, string | undefined>): Promise<string[]> {
  const { rootCertificates } = await import('node:tls');
  const cas = [...rootCertificates];
  const system = SYSTEM_CA_FILES.find((file) => existsSync(file));
  for (const file of [system, env.NODE_EXTRA_CA_CERTS]) {
    if (!file) continue;
    try {
      cas.push(readFileSync(file, 'utf8'));
    } catch {
      // An unreadable bundle only narrows trust; the TLS error will name the certificate.
    }
  }
  return cas;
}

/** What a transport to an origin is made from: the client's options (ClientOptions), and the CAs an https origin is checked against. */
export interface TransportOptions {
  timeoutMs: number;
  /** Sockets to the origin. */
  connections: number;
  /** A great many calls: undici's pool (transport.ts says why). */
  manyCalls?: boolean;
  /** Called before undici is loaded. */
  beforeUndici?: () => Promise<void>;
  /** The process ends when the transport is closed (NodeTransport leaves idle sockets to that exit). */
  exitCloses?: boolean;
  proxy?: ProxyChoice;
  /** The CAs an https origin is checked against (casFor). */
  ca: () => Promise<string[]> | undefined;
}

/**
 * A keep-alive pool to the origin: node:http, or undici's pool for a run of many calls (see
 * transport.ts), or undici's proxy agent whose pools fail fast when the proxy closes on
 * them. undici is loaded only by the runs that use it. The client's, and a notification's
 * (webhook.ts): both go the same way, through the same proxy rules.
 */
export function transportTo(origin: string, options: TransportOptions): Transport {
  const { timeoutMs, connections, manyCalls, beforeUndici, exitCloses, proxy, ca: cas } = options;
  // As many sockets as requests can be in flight; one for a single user's pages.
  if (!proxy && !manyCalls) return new NodeTransport(origin, { connections, ca: cas, exitCloses });
  return new UndiciTransport(origin, async () => {
    await beforeUndici?.();
    const { Pool, ProxyAgent } = await import('undici');
    const pool = { keepAliveTimeout: 30_000, connections };
    const ca = await cas();
    const tls = { timeout: timeoutMs, ...(ca ? { ca } : {}) };
    if (!proxy) return new Pool(origin, { ...pool, connect: tls });
    return new ProxyAgent({
      uri: proxy.url.href,
      // An http:// service is reached by absolute-URI forwarding, which every proxy serves;
      // CONNECT only for https://, as curl does.
      proxyTunnel: origin.startsWith('https:'),
      proxyTls: { timeout: timeoutMs },
      requestTls: tls,
      factory: (o, opts: Pool.Options) => new Pool(o, { ...pool, ...opts, connect: failingFast(opts.connect) }),
    });
  });
}

/** The CAs an https origin is checked against, read once on first use; none for http. */
export function casFor(origin: string, env: Record<string, string | undefined>): () => Promise<string[]> | undefined {
  let read: Promise<string[]> | undefined;
  return () => (origin.startsWith('https:') ? (read ??= trustedCas(env)) : undefined);
}

/**
 * A connector whose "closed by the other side" is final for the requests waiting on it.
 * undici treats that error as recoverable and reconnects at once, without a delay and
 * without failing them: a proxy that closes every CONNECT kept a run spinning forever.
 * Failing them hands the decision to sgq's retries, with their backoff.
 */
function failingFast(connect: Pool.Options['connect']): buildConnector.connector | undefined {
  if (typeof connect !== 'function') return undefined;
  return (opts, callback) =>
    connect(opts, (...args) => {
      const [err] = args;
      if ((err as { code?: string } | null)?.code !== 'UND_ERR_SOCKET') return callback(...args);
      callback(Object.assign(new Error('the proxy closed the connection'), { code: PROXY_CLOSED }), null);
    });
}
