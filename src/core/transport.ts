import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import type { Dispatcher } from 'undici';
import { CallError } from './classify.js';
import { ExitCode } from './errors.js';

// What the client needs of an HTTP stack: requests over a keep-alive pool, each one abortable,
// its body collected whole up to a size limit. Two stacks serve it (client.ts chooses):
// - Node's own http module, for a run with one request at a time: Node has loaded it already,
//   where undici costs a one-shot command some 20 ms before its first byte.
// - undici, for a run that keeps several requests in flight (a list of users, --parallel) and
//   behind a proxy: its cost per request is about half of node:http's, which bounds the
//   throughput of a long list against a fast service. It is called through `dispatch`, so a
//   request costs no AbortSignal and no body stream.

export interface TransportRequest {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The largest body accepted, so that a runaway answer cannot exhaust memory. */
  maxBodyBytes: number;
}

export interface TransportResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The whole body; rejects if it fails or passes `maxBodyBytes` on its way. */
  text(): Promise<string>;
}

/** A request on its way: its answer, and a way to give up on it. */
export interface PendingRequest {
  readonly response: Promise<TransportResponse>;
  /** Fails the request (a no-op once it ended); one still waiting for a socket may not notice. */
  abort(): void;
}

export interface Transport {
  request(req: TransportRequest): PendingRequest;
  /** Ends the pool once idle. */
  close(): Promise<void>;
  /** Ends the pool now, failing what is in flight. */
  destroy(): Promise<void>;
}

const bodyTooLarge = (limit: number) => new CallError(ExitCode.network, `the service sent a body larger than ${Math.round(limit / 1024 / 1024)} MiB`, undefined, false);
const aborted = () => Object.assign(new Error('the request was aborted'), { name: 'AbortError', code: 'ABORT_ERR' });

/** A body gathered chunk by chunk: refused once past the limit, before it is all in memory. */
class Collector {
  private chunks: Buffer[] = [];
  private size = 0;
  private settle!: { resolve: (text: string) => void; reject: (error: unknown) => void };
  readonly text: Promise<string>;

  constructor(private readonly limit: number) {
    this.text = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // Nobody reads the body of an attempt that timed out: its failure is not an unhandled one.
    this.text.catch(() => undefined);
  }

  /** Whether the declared length is within the limit (refusing it at once when not). */
  declared(contentLength: string | string[] | undefined): boolean {
    if (typeof contentLength === 'string' && Number(contentLength) > this.limit) {
      this.fail(bodyTooLarge(this.limit));
      return false;
    }
    return true;
  }

  /** Takes a chunk; false (and the body fails) once the body passes the limit. */
  add(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.fail(bodyTooLarge(this.limit));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  end(): void {
    this.settle.resolve(this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks, this.size).toString('utf8'));
  }

  fail(error: unknown): void {
    this.chunks = [];
    this.settle.reject(error);
  }
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

  request({ path, method, headers, body, maxBodyBytes }: TransportRequest): PendingRequest {
    let req: ReturnType<RequestFn> | undefined;
    let gaveUp = false;
    const response = this.load().then(
      ({ agent, request }) =>
        new Promise<TransportResponse>((resolve, reject) => {
          if (this.destroyed) throw Object.assign(new Error('the connection pool was closed'), { code: 'UND_ERR_DESTROYED' });
          if (gaveUp) throw aborted();
          req = request({
            protocol: this.url.protocol,
            hostname: this.url.hostname.replace(/^\[|\]$/g, ''),
            port: this.url.port || undefined,
            path,
            method,
            headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
            agent,
          });
          req.once('response', (res) => {
            const body = new Collector(maxBodyBytes);
            resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, text: () => body.text });
            if (!body.declared(res.headers['content-length'])) return void res.destroy();
            res.on('data', (chunk: Buffer) => body.add(chunk) || res.destroy());
            res.once('end', () => body.end());
            // A body cut short (a reset, an abort) fails with the error its stream reports.
            res.once('error', (error) => body.fail(error));
            res.once('close', () => res.complete || body.fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
          });
          req.once('error', reject);
          req.end(body);
        }),
    );
    return {
      response,
      abort: () => {
        gaveUp = true;
        req?.destroy(aborted());
      },
    };
  }

  async close(): Promise<void> {
    await this.destroy();
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    if (this.stack) (await this.stack).agent.destroy();
  }
}

/** undici's dispatcher (a pool, or the proxy agent) as a Transport, made on first use. */
export class UndiciTransport implements Transport {
  private made: Promise<Dispatcher> | undefined;
  /** The dispatcher once made, so that a request need not wait a turn for it. */
  private ready: Dispatcher | undefined;

  constructor(
    private readonly origin: string,
    private readonly make: () => Promise<Dispatcher>,
  ) {}

  private dispatcher(): Promise<Dispatcher> {
    return (this.made ??= this.make().then((d) => (this.ready = d)));
  }

  request({ path, method, headers, body, maxBodyBytes }: TransportRequest): PendingRequest {
    const call = new UndiciCall(maxBodyBytes);
    const options = { origin: this.origin, path, method: method as Dispatcher.HttpMethod, headers, body };
    if (this.ready) this.ready.dispatch(options, call);
    else this.dispatcher().then((d) => d.dispatch(options, call), (error: unknown) => call.onResponseError(undefined, error as Error));
    return call;
  }

  async close(): Promise<void> {
    if (this.made) await (await this.made).close();
  }

  async destroy(): Promise<void> {
    if (this.made) await (await this.made).destroy();
  }
}

/** One request through undici: the handler its dispatcher calls back, and the request's answer. */
class UndiciCall implements Dispatcher.DispatchHandler, PendingRequest {
  readonly response: Promise<TransportResponse>;
  private answered!: { resolve: (res: TransportResponse) => void; reject: (error: unknown) => void };
  private body: Collector | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private gaveUp = false;

  constructor(private readonly limit: number) {
    this.response = new Promise((resolve, reject) => (this.answered = { resolve, reject }));
  }

  abort(): void {
    this.gaveUp = true;
    this.controller?.abort(aborted());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.gaveUp) controller.abort(aborted());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return; // 1xx: the answer is still to come
    const body = (this.body = new Collector(this.limit));
    this.answered.resolve({ statusCode, headers, text: () => body.text });
    if (!body.declared(headers['content-length'])) controller.abort(aborted());
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.body!.add(chunk)) controller.abort(aborted());
  }

  onResponseEnd(): void {
    this.body!.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.body) this.body.fail(error);
    else this.answered.reject(error);
  }
}
