import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Reply =
  | { status?: number; body: unknown; headers?: Record<string, string> }
  | { status?: number; text: string; headers?: Record<string, string> }
  | 'reset'
  | 'hang';

/**
 * A loopback server that answers from a queue and records every request, so a test can
 * check exactly what sgq sent. `assertDone` fails if a queued answer was never asked for.
 */
export async function stubServer(replies: Reply[] | ((req: Recorded, n: number) => Reply | Promise<Reply>)) {
  const requests: Recorded[] = [];
  let probes = 0;
  const queue = Array.isArray(replies) ? [...replies] : undefined;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      // sgq asking a loopback address whether it is a sandbox (src/core/service.ts): a service
      // says nothing of the kind, and the question is not one of the requests a test checks.
      if (req.method === 'GET' && req.url === '/') {
        probes++;
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
        return;
      }
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const chosen = queue ? queue.shift() : (replies as (r: Recorded, n: number) => Reply | Promise<Reply>)(recorded, requests.length);
      // A reply may wait (a test holding an answer back): answered when it settles.
      void Promise.resolve(chosen).then((reply) => answer(reply));
    });
    const answer = (reply: Reply | undefined) => {
      if (reply === undefined) {
        res.writeHead(599).end('{"message":"stub: no reply queued"}');
        return;
      }
      if (reply === 'reset') {
        req.socket.destroy();
        return;
      }
      if (reply === 'hang') return; // never answers; close() ends the connection
      const text = 'text' in reply ? reply.text : JSON.stringify(reply.body);
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(text);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const timer = setTimeout(() => server.close(), 60_000);
  timer.unref();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    /** How many times sgq asked the root whether this is a sandbox. */
    probes: () => probes,
    bodies: () => requests.map((r) => JSON.parse(r.body) as Record<string, unknown>),
    assertDone() {
      if (queue && queue.length) throw new Error(`${queue.length} stubbed replies were never requested`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A paginated envelope as in spec §2.1. */
export function envelope(page: number, next: number | null, data: unknown[], credits = 100, user = 'jack'): unknown {
  return { user, how: 'username', page, previous_page: page > 1 ? page - 1 : null, next_page: next, page_items: data.length, data, current_credits: credits };
}

/** Stub servers for the tests of one file, each closed after its test. */
export function useStubs(): (replies: Parameters<typeof stubServer>[0]) => ReturnType<typeof stubServer> {
  const open: Awaited<ReturnType<typeof stubServer>>[] = [];
  afterEach(async () => {
    for (const stub of open.splice(0)) await stub.close();
  });
  return async (replies) => {
    const stub = await stubServer(replies);
    open.push(stub);
    return stub;
  };
}
