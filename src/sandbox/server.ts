import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ROUTES, type RouteSpec } from '../core/routes.js';
import { SANDBOX_SERVICE, SERVICE_HEADER } from '../core/service.js';
import { accountExists, parseServiceSince } from './data.js';
import { generate } from './generate.js';
import { bendPaging, servedPage } from './paging-faults.js';
import { bodyText, type Shape } from './records.js';
import { isPagingKind, type MalformedKind, type PagingKind } from './fault-kinds.js';

// A faithful stand-in of the service (spec §2–§8) on loopback, with switches that inject
// the faults a real network produces, so scripts (and sgq's own tests) can meet them.

export const DEMO_KEY = 'sgq-demo-key';
/** Subscription expired and no credits: every paid call gets the 429 of spec §7. */
export const EXPIRED_KEY = 'sgq-expired-key';
/** Subscription expired with 20 credits: the 429 arrives once they are spent. */
export const LOW_KEY = 'sgq-low-key';

const PLACEHOLDER_MESSAGE = 'This endpoint is not available yet. Please check back later.';
const SINCE_TYPE_ERROR = "Invalid 'since' parameter type. It should be an ISO formatted string.";
const SINCE_FORMAT_ERROR = "Invalid 'since' parameter format. It should be an ISO formatted datetime string.";

export interface SandboxOptions {
  port?: number;
  /** Serve under a path prefix, as a gateway would: `/social` serves `/social/api/...`. */
  prefix?: string;
  /** The newest follower's timestamp; the default is the start of the current hour. */
  clock?: () => Date;
  /**
   * Followers and followed accounts come, go and flicker with the clock (churn.ts): about
   * this fraction of a list leaves each day, as many come, and as many more are missing for
   * that day only. 0 (the default): a list is the same at any clock time.
   */
  churn?: number;
  /** Starting balance of the demo key. */
  credits?: number;
  /** Stop by itself after this many ms. */
  ttlMs?: number;
  faults?: Faults;
  /** Let Node exit while the sandbox serves (a library's in-process sandbox must not hold a script open). */
  unref?: boolean;
  /**
   * Records as the real service shapes them ('service', the default: prefixed follower fields,
   * ids past 2^53, text in every script), or the two fields of the spec's example ('spec').
   */
  shape?: Shape;
  /**
   * Every answer says it comes from sgq's sandbox (header x-sgq-service: sandbox), so that sgq
   * keeps what a run against it leaves apart from a real service's state. False only to stand
   * in for another service in tests.
   */
  announce?: boolean;
}

export interface Faults {
  /** Added before every answer. */
  latencyMs?: number;
  /** The first N data requests answer `failStatus` (default 503). */
  failFirst?: number;
  failStatus?: number;
  /** Fractions of data requests that answer 503, reset the connection, never answer, or answer 429. */
  failRate?: number;
  resetRate?: number;
  hangRate?: number;
  rateLimitRate?: number;
  /** Seconds sent in Retry-After with a 429 (default 1), and with a 503 when set. */
  retryAfter?: number;
  /** Every request for this page answers 500. */
  failPage?: number;
  /** Every data answer is malformed this way. */
  malformed?: MalformedKind;
  /** HTTP status of answers carrying error records in `data` (default 200). */
  errorStatus?: number;
  /** Seed for the fault rates. */
  seed?: number;
  /**
   * Acts as a trial account: a route's requests an hour (by path, `graph/get_followers`); past
   * that, the 429 of service-facts.md (`API rate limit exceeded`, `Max Requests Per Hour`).
   */
  trialLimits?: Readonly<Record<string, number>>;
  /** The hour those limits count, in ms (default an hour): shorter only in tests. */
  trialHourMs?: number;
}

export interface Sandbox {
  url: string;
  /** The demo key, with its starting balance of credits. */
  apiKey: string;
  close: () => Promise<void>;
  /** Requests served, by route path, for tests that count calls. */
  readonly calls: Map<string, number>;
  /** Requests refused for a trial limit (Faults.trialLimits), by route path. */
  readonly refused: Map<string, number>;
  /** TCP connections accepted so far (keep-alive reuses one across pages). */
  readonly connections: () => number;
}

interface Account {
  credits: number;
  expired: boolean;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

const floorHour = () => new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  const service = new SandboxService(options, prefix);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    if (options.announce !== false) res.setHeader(SERVICE_HEADER, SANDBOX_SERVICE);
    void service.handle(req, res).catch(() => {
      if (!res.headersSent) send(res, { status: 500, body: { message: 'sandbox error' } });
    });
  });
  server.keepAliveTimeout = 60_000;
  let connections = 0;
  server.on('connection', (socket) => {
    if (options.unref) socket.unref();
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  if (options.unref) server.unref();
  const port = (server.address() as AddressInfo).port;
  let ttl: NodeJS.Timeout | undefined;
  const close = async () => {
    if (ttl) clearTimeout(ttl);
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  if (options.ttlMs) {
    ttl = setTimeout(() => void close(), options.ttlMs);
    ttl.unref();
  }
  return { url: `http://127.0.0.1:${port}${prefix}`, apiKey: DEMO_KEY, close, calls: service.calls, refused: service.trial.refused, connections: () => connections };
}

/** What the sandbox serves: its accounts, its fault switches and the calls it counted. */
class SandboxService {
  readonly calls = new Map<string, number>();
  readonly trial: TrialLimits;
  private readonly faults: Faults;
  private readonly clock: () => Date;
  private readonly accounts: Map<string, Account>;
  private readonly random: () => number;
  private readonly shape: Shape;
  private readonly churn: number;
  private dataRequests = 0;

  constructor(
    options: SandboxOptions,
    private readonly prefix: string,
  ) {
    this.faults = options.faults ?? {};
    this.clock = options.clock ?? floorHour;
    this.accounts = new Map<string, Account>([
      [DEMO_KEY, { credits: options.credits ?? 1_000_000, expired: false }],
      [EXPIRED_KEY, { credits: 0, expired: true }],
      [LOW_KEY, { credits: 20, expired: true }],
    ]);
    this.random = mulberry32(this.faults.seed ?? 1);
    this.shape = options.shape ?? 'service';
    this.churn = options.churn ?? 0;
    this.trial = new TrialLimits(this.faults.trialLimits ?? {}, this.faults.trialHourMs ?? 3_600_000);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { faults } = this;
    const text = await readAll(req);
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const apiPrefix = `${this.prefix}/api/`;
    // Outside the API (sgq's question "who are you?" asks the root): answered at once, with no fault.
    if (!url.pathname.startsWith(apiPrefix)) return send(res, { status: 404, body: { message: 'Not Found' } });
    if (faults.latencyMs) await new Promise((r) => setTimeout(r, faults.latencyMs));
    const path = url.pathname.slice(apiPrefix.length).replace(/\/+$/, '');
    const route = ROUTES.find((r) => r.path === path);
    if (!route) return send(res, { status: 404, body: { message: 'Not Found' } });
    if (req.method !== 'POST' && !(route.subject === 'none' && req.method === 'GET')) {
      return send(res, { status: 405, body: { message: 'Method Not Allowed' } });
    }
    this.calls.set(path, (this.calls.get(path) ?? 0) + 1);
    const payload = readPayload(text);
    if (payload === undefined) return send(res, { status: 422, body: { detail: 'The request body is not a JSON object.' } });
    if (route.subject !== 'none') {
      const injected = this.injectFault(payload);
      if (injected === 'reset') return void req.socket.destroy();
      if (injected === 'hang') return;
      if (injected) return send(res, injected);
    }
    const answer = this.answerRoute(route, payload, req.headers['x-api-key']);
    if (faults.malformed && !isPagingKind(faults.malformed) && route.subject !== 'none' && answer.status === 200) return sendMalformed(res, faults.malformed, answer.body);
    send(res, answer);
  }

  /** Decides whether this data request meets an injected fault. */
  private injectFault(payload: Record<string, unknown>): Answer | 'reset' | 'hang' | undefined {
    const { faults, random } = this;
    this.dataRequests++;
    const retryAfter = String(faults.retryAfter ?? 1);
    if (faults.failFirst && this.dataRequests <= faults.failFirst) {
      const status = faults.failStatus ?? 503;
      const headers = status === 429 || faults.retryAfter !== undefined ? { 'retry-after': retryAfter } : undefined;
      return { status, body: { message: status === 429 ? 'Too Many Requests' : 'Service Unavailable' }, headers };
    }
    if (faults.failPage !== undefined && payload.page === faults.failPage) {
      return { status: 500, body: { message: 'Internal Server Error' } };
    }
    if (faults.resetRate && random() < faults.resetRate) return 'reset';
    if (faults.hangRate && random() < faults.hangRate) return 'hang';
    if (faults.failRate && random() < faults.failRate) return { status: 503, body: { message: 'Service Unavailable' } };
    if (faults.rateLimitRate && random() < faults.rateLimitRate) {
      return { status: 429, body: { message: 'Too Many Requests' }, headers: { 'retry-after': retryAfter } };
    }
    return undefined;
  }

  private answerRoute(route: RouteSpec, payload: Record<string, unknown>, keyHeader: string | string[] | undefined): Answer {
    const key = typeof keyHeader === 'string' ? keyHeader : undefined;
    const account = key ? this.accounts.get(key) : undefined;
    if (route.needsKey) {
      if (!key) return { status: 401, body: { message: 'Missing API key: send it in the x-api-key header.' } };
      if (!account) return { status: 401, body: { message: 'Invalid API key.' } };
    }
    if (route.placeholder) return { status: 200, body: { message: PLACEHOLDER_MESSAGE } };
    const refusal = this.trial.refusal(route);
    if (refusal) return refusal;
    if (route.subject === 'none') {
      return { status: 200, body: { data: [{ service: 'Social Graph and Metadata Query Service', sandbox: true, routes: ROUTES.map((r) => `/${r.path}`) }] } };
    }

    const cost = price(route);
    if (account && cost > 0 && account.credits < cost) {
      return { status: 429, body: { Error: 'Subscription expired and credit value exceeded', Endpoint: `/${route.path}`, 'Current credits': account.credits } };
    }
    const user = typeof payload.user === 'string' ? payload.user : '';
    const how = typeof payload.how === 'string' ? payload.how : 'username';
    const page = route.paginated ? (typeof payload.page === 'number' && Number.isInteger(payload.page) && payload.page >= 1 ? payload.page : 1) : null;
    const dataError = (error: string): Answer => ({
      status: this.faults.errorStatus ?? 200,
      body: envelope(route, user, how, page, [{ error }], account?.credits, false),
    });

    let sinceMs: number | undefined;
    if (route.since && payload.since !== undefined && payload.since !== null) {
      if (typeof payload.since !== 'string') return dataError(SINCE_TYPE_ERROR);
      sinceMs = parseServiceSince(payload.since);
      if (sinceMs === undefined) return dataError(SINCE_FORMAT_ERROR);
    }
    if (!user || !accountExists(user, how)) return dataError(`no data for ${how} = ${user}`);

    return this.answerData(route, user, how, page, sinceMs, account);
  }

  /** A page of records, charged at the route's price, its paging bent if a fault says so. */
  private answerData(route: RouteSpec, user: string, how: string, page: number | null, sinceMs: number | undefined, account: Account | undefined): Answer {
    const paging = isPagingKind(this.faults.malformed) && page !== null ? this.faults.malformed : undefined;
    const { items, total, pageSize } = generate(route, user, how, servedPage(paging, page ?? 1), sinceMs, this.clock(), this.shape, this.churn);
    if (account) account.credits -= price(route);
    const body = envelope(route, user, how, page, items, account?.credits, pageSize > 0 && (page ?? 1) * pageSize < total);
    if (paging) bendPaging(paging, body, page!);
    return { status: 200, body };
  }
}

/**
 * A trial account's hourly limits: a sliding hour of the requests each limited route took
 * (refused ones are not counted); one past the limit gets the 429 of service-facts.md, with no
 * Retry-After, as the service's documentation describes it.
 */
class TrialLimits {
  readonly refused = new Map<string, number>();
  private readonly taken = new Map<string, number[]>();

  constructor(
    private readonly limits: Readonly<Record<string, number>>,
    private readonly hourMs: number,
  ) {}

  /** The refusal of a request of `route` now, or undefined when the hour has room (the request is counted). */
  refusal(route: RouteSpec): Answer | undefined {
    const limit = this.limits[route.path];
    if (limit === undefined) return undefined;
    const now = Date.now();
    const times = (this.taken.get(route.path) ?? []).filter((t) => t > now - this.hourMs);
    this.taken.set(route.path, times);
    if (times.length < limit) {
      times.push(now);
      return undefined;
    }
    this.refused.set(route.path, (this.refused.get(route.path) ?? 0) + 1);
    return { status: 429, body: { Error: 'API rate limit exceeded', Endpoint: `/${route.path}`, 'Max Requests Per Hour': limit } };
  }
}

/** Credits a call that returns data costs: the route table's price, 1 where it has none. */
const price = (route: RouteSpec): number => route.cost ?? 1;

/** A request body as an object; an empty body is {}; undefined when it is not a JSON object. */
function readPayload(text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function envelope(route: RouteSpec, user: string, how: string, page: number | null, data: unknown[], credits: number | undefined, hasNext: boolean) {
  const body: Record<string, unknown> = { user, how };
  if (route.paginated) {
    body.page = page;
    body.previous_page = page !== null && page > 1 ? page - 1 : null;
    body.next_page = page !== null && hasNext ? page + 1 : null;
    body.page_items = data.length;
  }
  body.data = data;
  if (credits !== undefined) body.current_credits = credits;
  return body;
}

function send(res: ServerResponse, answer: Answer): void {
  const text = bodyText(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...answer.headers });
  res.end(text);
}

function sendMalformed(res: ServerResponse, kind: Exclude<MalformedKind, PagingKind>, body: unknown): void {
  const json = bodyText(body);
  const bodies: Record<Exclude<MalformedKind, PagingKind>, () => string> = {
    html: () => '<html><body><h1>502 Bad Gateway</h1></body></html>',
    truncated: () => json.slice(0, Math.floor(json.length / 2)),
    text: () => 'upstream connect error or disconnect/reset before headers',
    'data-object': () => JSON.stringify({ ...(body as object), data: { unexpected: true } }),
    'bad-page': () => bodyText({ ...(body as object), next_page: 'two' }),
    huge: () => `{"data":[${'{"username":"x"},'.repeat(5_000_000)}{"username":"x"}]}`,
  };
  const text = bodies[kind]();
  res.writeHead(200, { 'content-type': kind === 'html' ? 'text/html' : 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A small seeded PRNG, so a fault rate hits the same requests on every run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
