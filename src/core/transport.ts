import { isUtf8 } from 'node:buffer';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import type { Dispatcher } from 'undici';
import { CallError } from './classify.js';
import { ExitCode } from './errors.js';

// What the client needs of an HTTP stack: requests over a keep-alive pool, each one abortable,
// its body collected whole up to a size limit. Two stacks serve it (client.ts chooses):
// - Node's own http module: Node has loaded it already, where undici costs a command some
//   30 ms before its first byte (on Node 20, also some 150 ms at exit: see newClient in
//   src/cli/run/execute.ts).
// - undici, behind a proxy and for a list of users on stdin, which may hold a million: its
//   cost per request is about half of node:http's, and that bounds the throughput of a long
//   list against a fast service. (Starting such a list on node:http and moving to undici
//   after a thousand calls cost its throughput some 10-25%.) It is called through
//   `dispatch`, so a request costs no AbortSignal and no body stream.

export interface TransportRequest {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The largest body accepted, so that a runaway answer cannot exhaust memory. */
  maxBodyBytes: number;
}

/** An answer, its body read whole. */
export interface TransportResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A request on its way: its answer, and a way to give up on it. */
export interface PendingRequest {
  /** Settles once the whole body is in, or the request failed, passed the limit, or was given up. */
  readonly response: Promise<TransportResponse>;
  /** The status and headers as soon as they arrived, also when the body then failed. */
  readonly head?: { statusCode: number; headers: IncomingHttpHeaders };
  /** `response` has settled, one way or the other. */
  readonly settled: boolean;
  /**
   * Gives up on the request: `response` fails at once. Returns false when the request could
   * not be stopped below (one still waiting for a socket): its pool is stuck with it.
   */
  abort(): boolean;
}

export interface Transport {
  request(req: TransportRequest): PendingRequest;
  /** Ends the pool once idle. */
  close(): Promise<void>;
  /** Ends the pool now, failing what is in flight. */
  destroy(): Promise<void>;
}

const bodyTooLarge = (limit: number) => new CallError(ExitCode.network, `the service sent a body larger than ${Math.round(limit / 1024 / 1024)} MiB`, undefined, false);
const notUtf8 = (status: number) =>
  new CallError(ExitCode.network, 'the service sent a body that is not valid UTF-8', 'nothing of it was kept; try again later, or report it to the service', false, undefined, [], { status });

// Strict: a byte that is not UTF-8 must not become U+FFFD, which would turn two different names
// into one. The BOM is kept, as the bytes were. isUtf8 checks what a fatal TextDecoder would
// refuse, without loading Node's TextDecoder (some 0.15 ms of every start).

/**
 * The text of a body, or undefined when a successful answer is not valid UTF-8. The body of a
 * failed answer only feeds a message, so its bad bytes are replaced and its status decides.
 */
function decodeBody(body: Buffer, statusCode: number): string | undefined {
  if (statusCode < 200 || statusCode >= 300) return body.toString('utf8');
  return isUtf8(body) ? body.toString('utf8') : undefined;
}

const aborted = () => Object.assign(new Error('the request was aborted'), { name: 'AbortError', code: 'ABORT_ERR' });

/**
 * What both stacks share: one promise per request, settled by the first of the whole body,
 * a failure, the size limit or an abort; the body gathered chunk by chunk and refused once
 * past the limit, before it is all in memory.
 */
abstract class Pending implements PendingRequest {
  readonly response: Promise<TransportResponse>;
  head?: { statusCode: number; headers: IncomingHttpHeaders };
  settled = false;
  private settle!: { resolve: (res: TransportResponse) => void; reject: (error: unknown) => void };
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit: number) {
    this.response = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  /** Stops the request below; false if it cannot be reached yet. */
  protected abstract stop(error: Error): boolean;

  abort(): boolean {
    if (this.settled) return true;
    this.fail(aborted());
    return this.stop(aborted());
  }

  /** The status and headers; false (the request failed) when the declared length is past the limit. */
  protected started(statusCode: number, headers: IncomingHttpHeaders): boolean {
    this.head = { statusCode, headers };
    const declared = headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > this.limit) return this.tooLarge();
    return true;
  }

  /** Takes a chunk; false (the request failed) once the body passes the limit. */
  protected received(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.limit) return this.tooLarge();
    this.chunks.push(chunk);
    return true;
  }

  protected ended(): void {
    if (this.settled) return;
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    const { statusCode, headers } = this.head!;
    const text = decodeBody(body, statusCode);
    if (text === undefined) return this.fail(notUtf8(statusCode));
    this.settled = true;
    this.chunks = [];
    this.settle.resolve({ statusCode, headers, text });
  }

  /** Fails the request, unless it already ended. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.chunks = [];
    this.settle.reject(error);
  }

  private tooLarge(): false {
    this.fail(bodyTooLarge(this.limit));
    this.stop(aborted());
    return false;
  }
}

type RequestFn = (options: RequestOptions, callback?: (res: IncomingMessage) => void) => ReturnType<typeof httpRequest>;

/** Keep-alive sockets to one origin through node:http or node:https (loaded only for https). */
export class NodeTransport implements Transport {
  private stack: Promise<{ agent: Agent; request: RequestFn }> | undefined;
  private destroyed = false;
  private readonly url: URL;
  /** Requests not yet settled: the agent's destroy ends its sockets, not the requests queued for one. */
  private readonly inFlight = new Set<NodeCall>();

  constructor(
    origin: string,
    private readonly options: { connections: number; ca: () => Promise<string[]> | undefined; exitCloses?: boolean },
  ) {
    this.url = new URL(origin);
  }

  private load() {
    const { connections, ca } = this.options;
    // Idle sockets of a keep-alive agent are unref'd: an idle pool does not keep Node running.
    const agentOptions = { keepAlive: true, maxSockets: connections };
    return (this.stack ??= (this.url.protocol === 'https:'
      ? Promise.all([import('node:https'), ca()]).then(([https, cas]) => ({ agent: new https.Agent({ ...agentOptions, ...(cas ? { ca: cas } : {}) }), request: https.request as RequestFn }))
      : Promise.resolve({ agent: new Agent(agentOptions), request: httpRequest as RequestFn })
    ).then((stack) => this.closingFreed(stack)));
  }

  /**
   * A request destroyed while queued for a socket still gets one when a socket closes, and
   * hands it straight back to the pool; since Node 24 that socket outlives the agent's
   * destroy, open to the service. Once destroyed, every socket the pool frees is closed.
   */
  private closingFreed<T extends { agent: Agent }>(stack: T): T {
    stack.agent.on('free', (socket: { destroy(): void }) => {
      if (this.destroyed) socket.destroy();
    });
    return stack;
  }

  request({ path, method, headers, body, maxBodyBytes }: TransportRequest): PendingRequest {
    const call = new NodeCall(maxBodyBytes);
    this.inFlight.add(call);
    const settled = () => void this.inFlight.delete(call);
    call.response.then(settled, settled);
    this.load().then(({ agent, request }) => {
      if (this.destroyed) return call.fail(Object.assign(new Error('the connection pool was closed'), { code: 'UND_ERR_DESTROYED' }));
      call.send(() =>
        request({
          protocol: this.url.protocol,
          hostname: this.url.hostname.replace(/^\[|\]$/g, ''),
          port: this.url.port || undefined,
          path,
          method,
          headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          agent,
        }),
        body,
      );
    }, (error: unknown) => call.fail(error));
    return call;
  }

  /**
   * Destroys the pool's sockets; with `exitCloses` (the process ends next), idle ones are left
   * to that exit, as a script's are: Node reads process.stderr to destroy a socket, which makes
   * the stream (some 0.5 ms of a one-page run that writes nothing to stderr). Idle sockets of
   * a keep-alive agent are unref'd; a busy one would keep the process running, so any busy
   * socket or waiting request means all are destroyed.
   */
  async close(): Promise<void> {
    if (this.options.exitCloses && this.stack) {
      const { agent } = await this.stack;
      const busy = [agent.sockets, agent.requests].some((byOrigin) => Object.values(byOrigin).some((list) => list !== undefined && list.length > 0));
      if (!busy) {
        this.destroyed = true;
        return;
      }
    }
    await this.destroy();
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    // A request queued for a socket (more in flight than the pool's sockets) would otherwise
    // get a new one once the old are gone, and wait out its time limit on a service that is down.
    for (const call of this.inFlight) call.abort();
    if (this.stack) (await this.stack).agent.destroy();
  }
}

/** One request through node:http. */
class NodeCall extends Pending {
  private req: ReturnType<RequestFn> | undefined;

  send(make: () => ReturnType<RequestFn>, body: string | undefined): void {
    // Given up before it was made: it is not sent.
    if (this.settled) return;
    const req = (this.req = make());
    req.once('response', (res) => {
      if (!this.started(res.statusCode ?? 0, res.headers)) return;
      res.on('data', (chunk: Buffer) => this.received(chunk));
      res.once('end', () => this.ended());
      // A body cut short (a reset, an abort) fails with the error its stream reports.
      res.once('error', (error) => this.fail(error));
      res.once('close', () => res.complete || this.fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
    });
    req.on('error', (error) => this.fail(error));
    req.end(body);
  }

  protected stop(error: Error): boolean {
    this.req?.destroy(error);
    return true;
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

/** One request through undici: the handler its dispatcher calls back. */
class UndiciCall extends Pending implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;

  protected stop(error: Error): boolean {
    this.controller?.abort(error);
    return this.controller !== undefined;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(aborted());
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode >= 200) this.started(statusCode, headers); // 1xx: the answer is still to come
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.received(chunk);
  }

  onResponseEnd(): void {
    this.ended();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.fail(error);
  }
}
