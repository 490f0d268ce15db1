import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CallsLedger } from '../../src/cli/run/calls-ledger.js';
import { creditsFolder } from '../../src/cli/run/credits-store.js';
import { processStart } from '../../src/fs/owner.js';
import { hostTag } from '../../src/fs/temp-names.js';
import { tempDir } from '../helpers/run.js';
import { until } from '../helpers/wait.js';

// Two ledgers of one owner stand for two processes (each flag has a tag of its own); the
// calls are framed by hand, as the budget frames them.

const owner = { service: 'https://a.example', profile: 'default' };
/** A ledger that goes idle as soon as its calls have ended (IDLE_MS 0), so each step is exact. */
const open = (config: string) => CallsLedger.open(config, owner, { idleMs: 0 })!;
const calls = (config: string) => join(creditsFolder(config, owner)!, 'calls');
const flags = (config: string) => readdirSync(calls(config)).filter((name) => name.endsWith('.call'));

/** One call of `ledger` from start to end; returns its start mark. */
const call = (ledger: CallsLedger) => {
  const mark = ledger.started();
  ledger.ended();
  return mark;
};

describe('the calls ledger', () => {
  it('alone, every interval is quiet; the flag goes when the ledger closes', () => {
    const config = join(tempDir(), 'config.json');
    const me = open(config);
    const first = call(me);
    const second = me.started();
    expect(me.quietSince(first)).toBe(true);
    me.ended();
    expect(me.quietSince(second)).toBe(true);
    expect(flags(config)).toHaveLength(1);
    me.close();
    expect(flags(config)).toEqual([]);
  });

  it('another process with a call in flight, or one that called in between, spoils the interval; one that called before does not', () => {
    const config = join(tempDir(), 'config.json');
    const me = open(config);
    const other = open(config);
    // In flight throughout.
    other.started();
    let mark = call(me);
    me.started();
    expect(me.quietSince(mark)).toBe(false);
    me.ended();
    other.ended();
    // A whole call between the mark and the check.
    mark = call(me);
    call(other);
    me.started();
    expect(me.quietSince(mark)).toBe(false);
    me.ended();
    // A call that ended before the mark.
    call(other);
    mark = call(me);
    me.started();
    expect(me.quietSince(mark)).toBe(true);
    me.ended();
    other.close();
    me.close();
  });

  it('a process keeps its flag up between calls back to back, and lowers it once idle', async () => {
    const config = join(tempDir(), 'config.json');
    const me = open(config);
    const other = CallsLedger.open(config, owner, { idleMs: 20 })!;
    call(other);
    let mark = call(me);
    me.started();
    expect(me.quietSince(mark)).toBe(false);
    me.ended();
    // Idle: a byte, then the flag down; the intervals after it are quiet.
    await until(() => flags(config).every((name) => readFileSync(join(calls(config), name), 'latin1') === '0'), 'the other process to go idle');
    mark = call(me);
    me.started();
    expect(me.quietSince(mark)).toBe(true);
    me.ended();
    other.close();
    me.close();
  });

  it('a process killed in a call spoils the interval it could have shared, is removed, and keeps no later one from being quiet', () => {
    const config = join(tempDir(), 'config.json');
    const me = open(config);
    const mark = call(me);
    // A process that is gone, its flag up: the pid of a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const name = `${dead}.${processStart(process.pid) ?? ''}.${hostTag()}.0000abcd.call`;
    writeFileSync(join(calls(config), name), '1');
    me.started();
    expect(me.quietSince(mark)).toBe(false);
    me.ended();
    expect(existsSync(join(calls(config), name))).toBe(false);
    const later = call(me);
    me.started();
    expect(me.quietSince(later)).toBe(true);
    me.ended();
    me.close();
  });

  it('one left by a killed process is swept by the next to open, and counts as a call for the others', () => {
    const config = join(tempDir(), 'config.json');
    const me = open(config);
    const mark = call(me);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(calls(config), `${dead}..${hostTag()}.0000abcd.call`), '1');
    open(config).close();
    expect(flags(config)).toHaveLength(1);
    me.started();
    expect(me.quietSince(mark)).toBe(false);
    me.ended();
    me.close();
  });

  it("another host's flag counts while it is recent, and goes once it has sat untouched for 10 minutes", () => {
    const config = join(tempDir(), 'config.json');
    const me = open(config);
    const other = hostTag() === '00000000' ? '00000001' : '00000000';
    const file = join(calls(config), `1.1.${other}.0000abcd.call`);
    writeFileSync(file, '1');
    let mark = call(me);
    me.started();
    expect(me.quietSince(mark)).toBe(false);
    me.ended();
    const old = new Date(Date.now() - 11 * 60_000);
    utimesSync(file, old, old);
    mark = call(me);
    me.started();
    expect(me.quietSince(mark)).toBe(false);
    me.ended();
    expect(existsSync(file)).toBe(false);
    mark = call(me);
    me.started();
    expect(me.quietSince(mark)).toBe(true);
    me.ended();
    me.close();
  });

  it('a ledger whose files were removed makes them again, and the interval across it is not quiet', () => {
    const config = join(tempDir(), 'config.json');
    const me = open(config);
    const other = open(config);
    const mark = call(me);
    rmSync(calls(config), { recursive: true });
    // The other process makes them again at its next call; this one too, and sees the other.
    const theirs = call(other);
    me.started();
    expect(me.quietSince(mark)).toBe(false);
    me.ended();
    expect(flags(config)).toHaveLength(2);
    const next = call(me);
    me.started();
    expect(me.quietSince(next)).toBe(true);
    expect(other.quietSince(theirs)).toBe(false);
    me.ended();
    me.close();
    other.close();
  });

  it.skipIf(process.platform === 'win32')('a FIFO in the place of seq is refused at once: no ledger, no run held up', () => {
    const config = join(tempDir(), 'config.json');
    open(config).close();
    rmSync(join(calls(config), 'seq'));
    expect(spawnSync('mkfifo', [join(calls(config), 'seq')]).status).toBe(0);
    expect(CallsLedger.open(config, owner)).toBeUndefined();
  });

  it('a folder it cannot make leaves no ledger (and nothing to vouch with)', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'credits'), 'a file where the folder goes');
    expect(CallsLedger.open(join(dir, 'config.json'), owner)).toBeUndefined();
    expect(CallsLedger.open(undefined, owner)).toBeUndefined();
  });
});
