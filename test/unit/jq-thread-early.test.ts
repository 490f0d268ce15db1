import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LaneStopped, workerLane } from '../../src/cli/jq/jq-lane.js';
import { jqFormatter } from '../../src/cli/jq/jq.js';
import { needsJqThread, startJqThreadEarly, takeEarlyThread } from '../../src/cli/jq/jq-thread-early.js';
import { tempDir } from '../helpers/run.js';
import { captureSink } from '../helpers/sink.js';

// jq's thread started as the line is read (src/cli/start/entry.ts), before the filter is known: the
// lane adopts it and hands it the filter, or it ends the lane with a line if it could not start.

// The build's thread and jq's WebAssembly (the global setup builds dist/).
const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
// A filter jq runs: splits (a regular expression's), which sgq's subset leaves to jq.
const program = { filter: '{u: .username, parts: [.username | splits("_")]}', flags: ['-c'] };

describe("jq's thread, started early", () => {
  it('is adopted by the lane, given the filter and the module after it booted, and answers as a thread of its own would', async () => {
    const file = join(dist, 'jq-worker.cjs');
    startJqThreadEarly(file);
    const lane = await workerLane(file, program, join(dist, 'vendor', 'build', 'jq.wasm'));
    expect(takeEarlyThread(), 'the lane took it').toBeUndefined();
    await expect(lane.check()).resolves.toBeUndefined();
    const sink = captureSink();
    const f = jqFormatter(lane, { filter: program.filter }, sink);
    await f.write([{ username: 'a_b' }, { username: 'c' }] as never);
    await f.end();
    expect(sink.text).toBe('{"u":"a_b","parts":["a","b"]}\n{"u":"c","parts":["c"]}\n');
  });

  it('that could not start ends the lane with one line, whether it failed before or after the lane took it', async () => {
    // A script that fails as it loads: the thread starts, and ends before it can answer.
    const broken = join(tempDir(), 'broken-jq-worker.cjs');
    writeFileSync(broken, "throw new Error('cannot start')\n");
    startJqThreadEarly(broken);
    const lane = await workerLane('unused', program);
    const failure = await lane.check().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LaneStopped);
    expect((failure as LaneStopped).message).toMatch(/^jq's thread (failed|ended)/);
    expect((failure as LaneStopped).message).not.toContain('\n');
  });

  it('starts only for a filter jq runs: not for one of sgq\'s subset, unless --slurp or --argjson give it to jq', () => {
    expect(needsJqThread(['graph', 'followers', 'a', '--jq', '.username'])).toBe(false);
    expect(needsJqThread(['graph', 'followers', 'a', '--jq=select(.n > 1) | .username'])).toBe(false);
    expect(needsJqThread(['graph', 'followers', 'a', '--jq', program.filter])).toBe(true);
    expect(needsJqThread(['graph', 'followers', 'a', '--jq', '.username', '--slurp'])).toBe(true);
    expect(needsJqThread(['graph', 'followers', 'a', '--jq', '$x', '--argjson', 'x', '1'])).toBe(true);
    expect(needsJqThread(['graph', 'followers', 'a', '--jq', '.username', '--jq', 'keys'])).toBe(true); // the last one counts, as for Commander
    expect(needsJqThread(['graph', 'followers', 'a'])).toBe(false);
  });
});
