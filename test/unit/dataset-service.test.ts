import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode, SgqError } from '../../src/core/errors.js';
import { DatasetLayout } from '../../src/core/dataset/layout.js';
import { SERVICE_FILE, claimDataset, recordedService } from '../../src/core/dataset/service-claim.js';
import { tempDir } from '../helpers/run.js';

// The claim of a dataset by a service, called directly.

const at = new Date('2026-11-01T03:00:00Z');
const owner = (service: string) => ({ service, profile: 'default' });

describe('claimDataset', () => {
  it('two runs of different services claiming one new dataset at once agree: one claims it, the other is refused (exit 2)', async () => {
    for (let round = 0; round < 10; round++) {
      const layout = new DatasetLayout(tempDir('sgq-dataset-'));
      mkdirSync(layout.meta, { recursive: true });
      const tries = ['https://a.example', 'https://b.example', 'sandbox'].map((service) => claimDataset(layout, owner(service), at, {}, () => undefined).then(() => service, (error: unknown) => error));
      const results = await Promise.all(tries);
      const winners = results.filter((r) => typeof r === 'string');
      expect(winners).toHaveLength(1);
      expect(recordedService(layout)).toBe(winners[0]);
      for (const refused of results.filter((r) => typeof r !== 'string')) {
        expect(refused).toBeInstanceOf(SgqError);
        expect((refused as SgqError).exitCode).toBe(ExitCode.usage);
      }
    }
  });

  it('writes a small JSON file at the dataset root, with the mode of the Parquet files (the root\'s access); the same service passes', async () => {
    const layout = new DatasetLayout(tempDir('sgq-dataset-'));
    mkdirSync(layout.meta, { recursive: true });
    chmodSync(layout.root, 0o750);
    await claimDataset(layout, owner('https://toto.oz.xyz'), at, {}, () => undefined);
    expect(JSON.parse(readFileSync(join(layout.root, SERVICE_FILE), 'utf8'))).toEqual({ service: 'https://toto.oz.xyz', claimed_at: '2026-11-01T03:00:00.000Z' });
    if (process.platform !== 'win32') expect(statSync(join(layout.root, SERVICE_FILE)).mode & 0o777).toBe(0o640);
    await claimDataset(layout, { service: 'https://toto.oz.xyz', profile: 'other' }, new Date(), {}, () => undefined);
    expect(JSON.parse(readFileSync(join(layout.root, SERVICE_FILE), 'utf8')).claimed_at).toBe('2026-11-01T03:00:00.000Z');
  });

  it('a claim file that is not one is refused in one line (exit 3), never waited on', async () => {
    const layout = new DatasetLayout(tempDir('sgq-dataset-'));
    mkdirSync(layout.meta, { recursive: true });
    writeFileSync(join(layout.root, SERVICE_FILE), '{"service": 3}');
    await expect(claimDataset(layout, owner('sandbox'), at, {}, () => undefined)).rejects.toMatchObject({ exitCode: ExitCode.config, message: expect.stringMatching(/cannot read .*sgq-dataset\.json: it holds no "service"/) });
    if (process.platform === 'win32') return;
    const fifo = new DatasetLayout(tempDir('sgq-dataset-'));
    execFileSync('mkfifo', [join(fifo.root, SERVICE_FILE)]);
    await expect(claimDataset(fifo, owner('sandbox'), at, {}, () => undefined)).rejects.toMatchObject({ exitCode: ExitCode.config, message: expect.stringMatching(/a FIFO, not a regular file/) });
  });
});
