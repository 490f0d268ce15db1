import { afterAll, beforeAll } from 'vitest';
import { DEMO_KEY, startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';

export const CLOCK = new Date('2026-11-01T12:00:00Z');

/** A sandbox for the tests of one file, on a free loopback port, with a fixed clock. */
export function useSandbox(options: SandboxOptions = {}): { readonly sandbox: Sandbox; env: () => Record<string, string> } {
  const holder: { sandbox?: Sandbox } = {};
  beforeAll(async () => {
    holder.sandbox = await startSandbox({ clock: () => CLOCK, ttlMs: 120_000, ...options });
  });
  afterAll(async () => {
    await holder.sandbox?.close();
  });
  return {
    get sandbox() {
      return holder.sandbox!;
    },
    env: () => ({ SGQ_BASE_URL: holder.sandbox!.url, SGQ_API_KEY: DEMO_KEY }),
  };
}
