import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeTransport } from '../../src/core/transport.js';
import { until } from '../helpers/wait.js';

// NodeTransport.close(): a library's client (and a test's) destroys every socket; the CLI's own
// process (exitCloses) leaves an idle keep-alive socket to its exit, as a script does, but
// never one that is busy, which would keep the process running.

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A server answering `{}` at once, or never for the path /hang; `open` lists its connections still open. */
async function server() {
  const open = new Set<Socket>();
  const s = createServer((req, res) => {
    req.resume();
    if (req.url !== '/hang') req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  s.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, open };
}

const ask = (transport: NodeTransport, path = '/') => transport.request({ path, method: 'POST', headers: {}, body: '{}', maxBodyBytes: 1 << 20 });

describe('closing a node:http transport', () => {
  it('destroys its idle keep-alive socket', async () => {
    const { url, open } = await server();
    const transport = new NodeTransport(url, { connections: 1, ca: () => undefined });
    expect((await ask(transport).response).statusCode).toBe(200);
    expect(open.size).toBe(1);
    await transport.close();
    await until(() => open.size === 0, 'the server to see the socket closed');
  });

  it('for a process that exits next (exitCloses), leaves the idle socket to that exit, and takes no more requests', async () => {
    const { url, open } = await server();
    const transport = new NodeTransport(url, { connections: 1, ca: () => undefined, exitCloses: true });
    expect((await ask(transport).response).statusCode).toBe(200);
    const [first] = open;
    await transport.close();
    // Still open once the server has answered another client since: the test's process
    // (standing in for the CLI's) has not exited.
    const other = new NodeTransport(url, { connections: 1, ca: () => undefined });
    expect((await ask(other).response).statusCode).toBe(200);
    await other.destroy();
    expect(open.has(first!)).toBe(true);
    await expect(ask(transport).response).rejects.toMatchObject({ code: 'UND_ERR_DESTROYED' });
    await transport.destroy();
    await until(() => open.size === 0, 'the server to see the socket closed');
  });

  it('for a process that exits next, still destroys a socket with a request in flight (it would keep the process running)', async () => {
    const { url, open } = await server();
    const transport = new NodeTransport(url, { connections: 1, ca: () => undefined, exitCloses: true });
    const hanging = ask(transport, '/hang');
    hanging.response.catch(() => undefined);
    await until(() => open.size === 1, 'the request to be sent');
    await transport.close();
    await until(() => open.size === 0, 'the server to see the socket closed');
    await expect(hanging.response).rejects.toBeDefined();
  });
});

describe('destroying a node:http transport', () => {
  it('fails every request in flight, those queued for a socket too: none is sent once the pool is gone', async () => {
    const { url, open } = await server();
    const transport = new NodeTransport(url, { connections: 1, ca: () => undefined });
    const onSocket = ask(transport, '/hang');
    const queued = ask(transport, '/hang');
    await until(() => open.size === 1, 'the first request on its socket');
    await transport.destroy();
    await expect(onSocket.response).rejects.toBeDefined();
    await expect(queued.response).rejects.toBeDefined();
    await until(() => open.size === 0, 'the server to see the socket closed');
  });
});
