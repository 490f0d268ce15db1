import { execa } from 'execa';
import { accessSync, chmodSync, constants, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { delimiter, join } from 'node:path';
import { tempDir } from './run.js';
import { waitFor } from './wait.js';

type Cleanups = (() => Promise<void> | void)[];

/** A proxy started by a test: its URL and what it logged so far. */
export interface RealProxy {
  url: string;
  log: () => string;
}

/** Where a program is installed, looking in sbin too (squid lives in /usr/sbin, off a user's PATH). */
export function installed(program: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    try {
      accessSync(join(dir, program), constants.X_OK);
      return join(dir, program);
    } catch {
      // not here
    }
  }
  return undefined;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => resolve(true)).on('error', () => resolve(false));
    socket.on('connect', () => socket.end());
  });

/** Sets a directive of a stock configuration file: replaces its line, or appends one. */
function setDirective(conf: string, pattern: RegExp, line: string): string {
  return pattern.test(conf) ? conf.replace(pattern, line) : `${conf}\n${line}\n`;
}

/**
 * Runs a proxy daemon in the foreground until the test's cleanup stops it. It runs under
 * coreutils `timeout`, so it is killed after ten minutes even if the test run itself dies.
 */
async function runDaemon(program: string, args: string[], port: number, pidFile: string, cleanups: Cleanups): Promise<void> {
  const child = execa('timeout', ['--signal=KILL', '600', program, ...args], { reject: false, stdin: 'ignore', all: true });
  let exited = false;
  void child.then(() => (exited = true));
  cleanups.push(async () => {
    // timeout passes SIGTERM on to the daemon and ends with it.
    child.kill('SIGTERM');
    const stopped = await Promise.race([child.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 15_000).unref())]);
    if (!stopped) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  await waitFor(async () => {
    if (exited) throw new Error(`${program} exited at start: ${(await child).all}`);
    return accepts(port);
  }, `${program} to listen on 127.0.0.1:${port}`);
}

/** A directory the daemon can write after it drops root for its own user (squid's `proxy`, `tinyproxy`). */
function daemonDir(prefix: string): string {
  const dir = tempDir(prefix);
  chmodSync(dir, 0o777);
  return dir;
}

/** squid with Debian's stock /etc/squid/squid.conf, changed only where it must be to run here. */
export async function startSquid(cleanups: Cleanups): Promise<RealProxy> {
  const dir = daemonDir('sgq-squid-');
  const port = await freePort();
  let conf = readFileSync('/etc/squid/squid.conf', 'utf8');
  conf = setDirective(conf, /^http_port .*$/m, `http_port 127.0.0.1:${port}`);
  conf = setDirective(conf, /^coredump_dir .*$/m, `coredump_dir ${dir}`);
  // The stock file lets CONNECT reach port 443 only; the test's TLS server has a free high port.
  conf = conf.replace(/^acl SSL_ports port 443\b.*$/m, '$&\nacl SSL_ports port 1025-65535');
  conf += [
    '',
    `pid_filename ${dir}/squid.pid`,
    `access_log stdio:${dir}/access.log`,
    `cache_log ${dir}/cache.log`,
    // The ICMP helper would outlive squid if squid were killed; the tests need no pinging.
    'pinger_enable off',
    // Stop at once when the tests are done instead of waiting 30 s for connections to drain.
    'shutdown_lifetime 0 seconds',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'squid.conf'), conf);
  await runDaemon(installed('squid') ?? 'squid', ['-N', '-f', join(dir, 'squid.conf')], port, join(dir, 'squid.pid'), cleanups);
  return { url: `http://127.0.0.1:${port}`, log: () => readIfThere(join(dir, 'access.log')) };
}

/** tinyproxy with Debian's stock /etc/tinyproxy/tinyproxy.conf, changed only where it must be to run here. */
export async function startTinyproxy(cleanups: Cleanups): Promise<RealProxy> {
  const dir = daemonDir('sgq-tinyproxy-');
  const port = await freePort();
  let conf = readFileSync('/etc/tinyproxy/tinyproxy.conf', 'utf8');
  conf = setDirective(conf, /^Port .*$/m, `Port ${port}`);
  conf = setDirective(conf, /^LogFile .*$/m, `LogFile "${dir}/tinyproxy.log"`);
  conf = setDirective(conf, /^PidFile .*$/m, `PidFile "${dir}/tinyproxy.pid"`);
  conf = setDirective(conf, /^#?\s*Listen .*$/m, 'Listen 127.0.0.1');
  writeFileSync(join(dir, 'tinyproxy.conf'), conf);
  await runDaemon(installed('tinyproxy') ?? 'tinyproxy', ['-d', '-c', join(dir, 'tinyproxy.conf')], port, join(dir, 'tinyproxy.pid'), cleanups);
  return { url: `http://127.0.0.1:${port}`, log: () => readIfThere(join(dir, 'tinyproxy.log')) };
}

function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * A broken proxy: `close` reads the request and closes the connection, `close-at-once` closes
 * it on accept, `forbid` answers every request (CONNECT too) with 403, `auth` with 407 (it
 * wants credentials), `silent` never answers.
 */
export async function brokenProxy(behaviour: 'close' | 'close-at-once' | 'forbid' | 'auth' | 'silent', cleanups: Cleanups): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket.on('close', () => sockets.delete(socket)).on('error', () => undefined));
    if (behaviour === 'close-at-once') return socket.destroy();
    socket.once('data', () => {
      if (behaviour === 'close') socket.end();
      if (behaviour === 'forbid') socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      if (behaviour === 'auth') socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="x"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}
