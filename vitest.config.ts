import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A timeout finds a test that hangs; it says nothing of speed (waits have deadlines of their
    // own). Two files at once beside a busy machine took a 4 s test past 20 s (300 users with
    // --snapshot, fsynced each), so a test that works is given a minute.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globalSetup: ['test/helpers/global-setup.ts'],
    // The service's public address (sgq's default base URL) does not resolve in a test.
    setupFiles: ['test/helpers/no-public-address.ts'],
    // Vitest's default is one worker fewer than the cores: one worker on CI's two. Most tests
    // wait on the processes they start (sgq, the sandbox, squid, a shell), so two files at once
    // keep both cores busy: the suite went from 8 min 20 s to 5 min 27 s on Node 20 there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
