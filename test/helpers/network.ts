import { execFileSync } from 'node:child_process';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './run.js';

/** A throw-away self-signed certificate for 127.0.0.1 (made with the openssl CLI). */
function selfSignedCert(): { key: string; cert: string; certFile: string } {
  const dir = tempDir('sgq-tls-');
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

type Cleanups = (() => Promise<void> | void)[];

/** An HTTPS server with a self-signed certificate that answers every request with one record. */
export async function httpsServer(cleanups: Cleanups): Promise<{ url: string; certFile: string }> {
  const tls = selfSignedCert();
  const server = createHttpsServer({ key: tls.key, cert: tls.cert }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ ok: true }] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, certFile: tls.certFile };
}

/** A CONNECT proxy that counts the tunnels it opens. */
export async function connectProxy(cleanups: Cleanups): Promise<{ url: string; tunnels: () => number }> {
  let tunnels = 0;
  const server = createNetServer((client: Socket) => {
    client.once('data', (head: Buffer) => {
      const m = /^CONNECT ([^:\s]+):(\d+)/.exec(head.toString());
      if (!m) return client.destroy();
      tunnels++;
      const upstream = connect(Number(m[2]), m[1]!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client).pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, tunnels: () => tunnels };
}
