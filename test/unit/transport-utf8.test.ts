import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeTransport } from '../../src/core/transport.js';

// A successful answer must be valid UTF-8 as the WHATWG decoder's fatal mode defines it: a
// byte sequence it refuses (not only a stray 0xFF) fails the request instead of becoming
// U+FFFD, which would turn two different names into one. The bytes are sent as they are.

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function answering(bytes: Buffer, status = 200): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(bytes));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function fetchText(bytes: Buffer, status?: number): Promise<string> {
  const transport = new NodeTransport(await answering(bytes, status), { connections: 1, ca: () => undefined });
  try {
    return (await transport.request({ path: '/', method: 'POST', headers: {}, body: '{}', maxBodyBytes: 1 << 20 }).response).text;
  } finally {
    await transport.destroy();
  }
}

const around = (hex: string) => Buffer.concat([Buffer.from('{"username":"a'), Buffer.from(hex, 'hex'), Buffer.from('"}')]);

describe('the body of an answer', () => {
  it.each([
    ['a UTF-16 surrogate (ED A0 80)', 'eda080'],
    ['an overlong "/" (C0 AF)', 'c0af'],
    ['an overlong NUL in three bytes (E0 80 80)', 'e08080'],
    ['a code point past U+10FFFF (F4 90 80 80)', 'f4908080'],
    ['a sequence cut short (E2 82)', 'e282'],
    ['a lone continuation byte (80)', '80'],
  ])('that holds %s fails, exit 7 (network), saying it is not UTF-8', async (_name, hex) => {
    await expect(fetchText(around(hex))).rejects.toMatchObject({ exitCode: 7, message: expect.stringMatching(/not valid UTF-8/) });
  });

  it('keeps every valid character as sent, a leading BOM included', async () => {
    const bytes = Buffer.concat([Buffer.from('efbbbf', 'hex'), around('c3a9f09f9880f48fbfbf')]);
    const text = await fetchText(bytes);
    expect(text).toBe('\uFEFF{"username":"aé😀\u{10FFFF}"}');
    expect(Buffer.from(text, 'utf8').equals(bytes)).toBe(true);
  });

  it('of a failure is read leniently: its status decides, not its bytes', async () => {
    expect(await fetchText(around('ff'), 500)).toBe('{"username":"a\uFFFD"}');
  });
});
