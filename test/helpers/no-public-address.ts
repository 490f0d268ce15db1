import dns from 'node:dns';
import { afterEach, expect } from 'vitest';

// No test may reach the service's public address, sgq's default base URL: in the test
// processes (in-process runs and the library) its host does not resolve, and a test that
// tried to reach it fails, whatever its run made of the failure. A run in a child process
// (the built binary) is kept from it by giving every such run a base URL of its own.

const PUBLIC_HOSTS = /(^|\.)oz\.xyz\.?$/i;
const tried: string[] = [];

type Lookup = (hostname: string, ...rest: unknown[]) => void;
const lookup = dns.lookup as unknown as Lookup;
(dns as unknown as { lookup: Lookup }).lookup = function guarded(this: unknown, hostname: string, ...rest: unknown[]) {
  if (!PUBLIC_HOSTS.test(hostname)) return lookup.call(this, hostname, ...rest);
  tried.push(hostname);
  const callback = rest.at(-1) as (error: Error) => void;
  process.nextTick(callback, Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (a test may not reach the public address)`), { code: 'ENOTFOUND', hostname }));
};

afterEach(() => {
  const hosts = tried.splice(0);
  expect(hosts, 'a test tried to reach the public address: give its run a base URL of its own').toEqual([]);
});
