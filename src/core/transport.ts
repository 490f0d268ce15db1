import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';

// What the client needs of an HTTP stack: one request at a time over a keep-alive pool. Node's
// own http module serves a service reached directly: it is loaded by Node already, where undici
// (kept for proxies, see client.ts) costs a one-shot command some 30 ms before its first byte.

export interface TransportRequest {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface TransportBody extends AsyncIterable<Buffer> {
  text(): Promise<string>;
  destroy(): void;
}

export interface TransportResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: TransportBody;
}

export interface Transport {
  request(req: TransportRequest): Promise<TransportResponse>;
  /** Ends the pool once idle. */
  close(): Promise<void>;
  /** Ends the pool now, failing what is in flight. */
  destroy(): Promise<void>;
}

type RequestFn = (options: RequestOptions, callback?: (res: IncomingMessage) => void) => ReturnType<typeof httpRequest>;

/** Keep-alive sockets to one origin through node:http or node:https (loaded only for https). */
export class NodeTransport implements Transport {
  private stack: Promise<{ agent: Agent; request: RequestFn }> | undefined;
  private destroyed = false;
  private readonly url: URL;

  constructor(
    origin: string,
    private readonly options: { connections: number; ca: () => Promise<string[]> | undefined },
  ) {
    this.url = new URL(origin);
  }

  private load() {
    const { connections, ca } = this.options;
    // Idle sockets of a keep-alive agent are unref'd: an idle pool does not keep Node running.
    const agentOptions = { keepAlive: true, maxSockets: connections };
    return (this.stack ??= this.url.protocol === 'https:'
      ? Promise.all([import('node:https'), ca()]).then(([https, cas]) => ({ agent: new https.Agent({ ...agentOptions, ...(cas ? { ca: cas } : {}) }), request: https.request as RequestFn }))
      : Promise.resolve({ agent: new Agent(agentOptions), request: httpRequest as RequestFn }));
  }

  async request({ path, method, headers, body, signal }: TransportRequest): Promise<TransportResponse> {
    const { agent, request } = await this.load();
    if (this.destroyed) throw Object.assign(new Error('the connection pool was closed'), { code: 'UND_ERR_DESTROYED' });
    return new Promise((resolve, reject) => {
      const req = request({
        protocol: this.url.protocol,
        hostname: this.url.hostname.replace(/^\[|\]$/g, ''),
        port: this.url.port || undefined,
        path,
        method,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent,
        signal,
      });
      req.once('response', (res) => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: bodyOf(res) }));
      req.once('error', reject);
      req.end(body);
    });
  }

  async close(): Promise<void> {
    await this.destroy();
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    if (this.stack) (await this.stack).agent.destroy();
  }
}

function bodyOf(res: IncomingMessage): TransportBody {
  return {
    [Symbol.asyncIterator]: () => res[Symbol.asyncIterator]() as AsyncIterator<Buffer>,
    async text() {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    destroy: () => res.destroy(),
  };
}
