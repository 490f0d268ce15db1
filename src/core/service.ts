import { join } from 'node:path';

// Which service a run talks to, as one key. Everything a run keeps for the next one (the
// --since-last marks, snapshots, the dataset, the balance note, observed prices, the answers
// cache, the lists of users left over) belongs to one service and one profile: every store
// asks this module for its key or its folder, none adds a suffix of its own, so a sandbox
// run or a profile pointed elsewhere never reads or changes the state of another service.

/** The key of every sgq sandbox, whatever its port: state carries over from one session to the next. */
export const SANDBOX_SERVICE = 'sandbox';

/** The header every answer of sgq's sandbox carries, with the value `sandbox`. */
export const SERVICE_HEADER = 'x-sgq-service';

/** What a run's kept state belongs to. */
export interface StateOwner {
  /** serviceOf(the base URL), or SANDBOX_SERVICE. */
  service: string;
  profile: string;
}

/**
 * A base URL as a service key: the scheme and host in lower case, the port when it is not the
 * scheme's default, and the path prefix, with no trailing `/` and no trailing `/api` (the
 * address the service's clients paste). `https://TOTO.oz.xyz:443/api/` and
 * `https://toto.oz.xyz` are one service; another host, port or prefix is another.
 */
export function serviceOf(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl.trim(); // not an address: only compared with itself
  }
  // URL already lower-cases the scheme and host and drops a default port.
  const path = url.pathname.replace(/\/{2,}/g, '/').replace(/\/+$/, '').replace(/\/api$/i, '');
  return `${url.protocol}//${url.host}${path}`;
}

/** The sandbox, or the address a service key was made from, for messages. */
export const serviceName = (service: string): string => (service === SANDBOX_SERVICE ? "sgq's sandbox" : service);

/** A folder name for any text: no separators, no leading dot (so never `.` or `..`). */
export const pathSegment = (text: string): string => encodeURIComponent(text).replace(/^\./, '%2E');

/**
 * The folder of a service's state under `root`: `@` and the encoded key. pathSegment encodes
 * `@`, so such a folder never collides with a profile's folder of sgq 3.x, which sits in `root`.
 */
export const serviceFolder = (root: string, service: string): string => join(root, `@${pathSegment(service)}`);

/** The folder of one owner's state under `root`: its service's folder, then the profile. */
export const ownerFolder = (root: string, owner: StateOwner): string => join(serviceFolder(root, owner.service), pathSegment(owner.profile));

/**
 * Whether state of sgq 3.x (no service in its keys) is taken over by a run of `owner`: it was
 * written for the service the profile pointed at, which a nightly run keeps pointing at. The
 * sandbox never takes it: it was never the sandbox's.
 */
export const adoptsLegacyState = (owner: StateOwner): boolean => owner.service !== SANDBOX_SERVICE;

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The service at `baseUrl`. An sgq sandbox can be reached at any loopback port (`sgq sandbox`
 * with SGQ_BASE_URL, a test's startSandbox): an http address on loopback is asked once, with
 * a GET of its root that no service charges for, whether it answers as the sandbox.
 */
export async function identifyService(baseUrl: string, options: { probe?: boolean; timeoutMs?: number } = {}): Promise<string> {
  const service = serviceOf(baseUrl);
  if (options.probe === false) return service;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return service;
  }
  if (url.protocol !== 'http:' || !LOOPBACK.test(url.hostname)) return service;
  return (await answersAsSandbox(url, options.timeoutMs ?? 2000)) ? SANDBOX_SERVICE : service;
}

/** Whether the server at `url` says it is sgq's sandbox; false when it does not answer in time. */
async function answersAsSandbox(url: URL, timeoutMs: number): Promise<boolean> {
  const { request } = await import('node:http');
  return new Promise((resolve) => {
    const req = request(url.origin + '/', { method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      resolve(res.headers[SERVICE_HEADER] === SANDBOX_SERVICE);
      res.resume();
      res.on('error', () => undefined);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Whether an answer's headers say it came from sgq's sandbox. */
export function answeredBySandbox(headers: Record<string, string | string[] | undefined>): boolean {
  const value = headers[SERVICE_HEADER];
  return (Array.isArray(value) ? value[0] : value) === SANDBOX_SERVICE;
}
