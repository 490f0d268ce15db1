import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PaceFile, paceFile } from '../../src/cli/run/pace-file.js';
import { tempDir } from '../helpers/run.js';

// The pace file: per profile and service, beside the config file, changed under its lock;
// what a hand or a crash damaged reads as nothing known, and a folder sgq cannot write leaves
// the run pacing its own calls.

const owner = { service: 'https://toto.oz.xyz', profile: 'work' };

describe('the pace file', () => {
  it('sits beside the config file, under the service and profile', () => {
    expect(paceFile('/home/u/.config/sgq/config.json', owner)).toBe('/home/u/.config/sgq/pace/@https%3A%2F%2Ftoto.oz.xyz/work/calls.json');
    expect(paceFile(undefined, owner)).toBeUndefined();
  });

  it('keeps what a change made, and reads it back', async () => {
    const path = paceFile(join(tempDir(), 'config.json'), owner)!;
    const file = new PaceFile(path, () => undefined);
    await file.update((state) => {
      state.learned = { at: Date.parse('2026-11-28T12:00:00Z') };
      state.routes['graph/get_followers'] = { calls: [{ id: '1.1', at: 1000, done: 1200, lapse: 5000 }], refusedAt: 1300, refusedUntil: 9000, stated: 10 };
    });
    expect(new PaceFile(path, () => undefined).read()).toEqual({
      learned: { at: Date.parse('2026-11-28T12:00:00Z') },
      routes: { 'graph/get_followers': { calls: [{ id: '1.1', at: 1000, done: 1200, lapse: 5000 }], refusedAt: 1300, refusedUntil: 9000, stated: 10 } },
    });
    expect(readFileSync(path, 'utf8')).toContain('"trial_since":"2026-11-28T12:00:00.000Z"');
  });

  it('reads a damaged file as nothing known, skipping what it cannot read', () => {
    const path = paceFile(join(tempDir(), 'config.json'), owner)!;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '{"routes": {"graph/get_followers": {"calls": [{"at": "never"}, 7], "stated_limit": -1}}, "learned": 3');
    expect(new PaceFile(path, () => undefined).read()).toEqual({ routes: {} });
    writeFileSync(path, '{"routes": {"graph/get_followers": {"calls": [{"at": "never"}, 7], "stated_limit": -1}}}');
    expect(new PaceFile(path, () => undefined).read()).toEqual({ routes: { 'graph/get_followers': { calls: [] } } });
  });

  it('where it cannot be written, says so once and keeps the run’s calls in memory', async () => {
    const config = join(tempDir(), 'config.json');
    // A file where its folder would go: as a read-only folder does, even for root.
    writeFileSync(join(dirname(config), 'pace'), '');
    const said: string[] = [];
    const file = new PaceFile(paceFile(config, owner), (line) => said.push(line));
    await file.update((state) => void (state.routes.x = { calls: [{ at: 1, lapse: 2 }] }));
    await file.update((state) => void state.routes.x!.calls.push({ at: 3, lapse: 4 }));
    expect(file.read().routes.x!.calls).toHaveLength(2);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^cannot keep the calls of a trial account in .*calls\.json: [^;]* \((ENOTDIR|EEXIST)\); check the path \S+; this run paces its own calls only$/);
  });
});
