import { execa, type ResultPromise } from 'execa';
import { WebSocket } from 'undici';
import { installed } from './proxies.js';
import { tempDir } from './run.js';
import { waitFor } from './wait.js';

// A real browser for the tests of sgq's page: Debian's headless Chromium, driven through the
// DevTools protocol on loopback (a WebSocket from undici), so that a test sees what a person's
// browser would: console errors, exceptions, every request the page makes, and the page's DOM
// and canvases once its scripts ran.

export const CHROMIUM = installed('chromium');

type Message = { id?: number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { message: string }; sessionId?: string };

export interface OpenedPage {
  /** Console errors, uncaught exceptions and errors the browser logged (a refused request, a policy violation). */
  errors: string[];
  /** Every URL the page asked for, its own included. */
  requests: string[];
  /** The value of an expression in the page (a promise is awaited). */
  evaluate<T>(expression: string): Promise<T>;
  close(): Promise<void>;
}

/** Starts Chromium on a free loopback port, opens `url` in a new tab and waits for its load event. */
export async function openInChromium(url: string): Promise<OpenedPage> {
  const profile = tempDir('sgq-chromium-');
  const child = execa(
    CHROMIUM!,
    ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-default-browser-check', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-extensions', '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'],
    { reject: false, env: { HOME: profile } },
  );
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  try {
    const address = await waitFor(() => /DevTools listening on (ws:\/\/\S+)/.exec(stderr)?.[1], `Chromium's DevTools address (stderr so far: ${stderr.slice(-300)})`, 45_000);
    return await attach(child, address!, url);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

async function attach(child: ResultPromise, address: string, url: string): Promise<OpenedPage> {
  const socket = new WebSocket(address);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve());
    socket.addEventListener('error', () => reject(new Error(`cannot connect to ${address}`)));
  });
  let next = 0;
  const pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  const listeners: ((m: Message) => void)[] = [];
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as Message;
    if (message.id !== undefined && pending.has(message.id)) {
      const waiter = pending.get(message.id)!;
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message);
    } else for (const listen of listeners) listen(message);
  });
  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
    new Promise<Message>((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  const { targetId } = (await send('Target.createTarget', { url: 'about:blank' })).result as { targetId: string };
  const { sessionId } = (await send('Target.attachToTarget', { targetId, flatten: true })).result as { sessionId: string };
  const errors: string[] = [];
  const requests: string[] = [];
  let loaded = false;
  listeners.push(({ method, params, sessionId: from }) => {
    if (from !== sessionId || !params) return;
    if (method === 'Runtime.exceptionThrown') errors.push(`exception: ${JSON.stringify(params.exceptionDetails)}`);
    if (method === 'Runtime.consoleAPICalled' && ['error', 'assert'].includes(params.type as string)) errors.push(`console.${params.type as string}: ${JSON.stringify(params.args)}`);
    if (method === 'Log.entryAdded' && (params.entry as { level: string }).level === 'error') errors.push(`log: ${JSON.stringify(params.entry)}`);
    if (method === 'Network.requestWillBeSent') requests.push((params.request as { url: string }).url);
    if (method === 'Page.loadEventFired') loaded = true;
  });
  for (const domain of ['Runtime', 'Log', 'Network', 'Page']) await send(`${domain}.enable`, {}, sessionId);
  await send('Page.navigate', { url }, sessionId);
  await waitFor(() => loaded, `the load event of ${url}`, 30_000);
  return {
    errors,
    requests,
    async evaluate<T>(expression: string): Promise<T> {
      const { result, exceptionDetails } = (await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId)).result as { result: { value: T }; exceptionDetails?: unknown };
      if (exceptionDetails) throw new Error(`the expression threw: ${JSON.stringify(exceptionDetails)}`);
      return result.value;
    },
    async close() {
      socket.close();
      child.kill('SIGTERM');
      await child;
    },
  };
}
