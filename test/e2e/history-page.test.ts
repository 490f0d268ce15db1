import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CHROMIUM, openInChromium, type OpenedPage } from '../helpers/chromium.js';
import { sgq } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { churningNights, writeNights, type Account } from '../helpers/snapshot-nights.js';

// `sgq history --html` in a real browser: Debian's headless Chromium opens the page from a
// file:// URL, with no network, and the test reads through the DevTools protocol what a person
// would see: no console error, no request but the page itself, two charts drawn per user, the
// page's data equal to `sgq history -o json`, and names and bios that stay text.

const skipped = CHROMIUM ? '' : ' (skipped: chromium is not installed; apt-get install chromium)';
const HOSTILE = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> & <!-- "q"';

/** Three weeks of jack (with an account whose name and bio try to become markup) and of amy. */
function store(): string {
  const dir = tempDir('sgq-store-');
  const jack = churningNights(21, 300);
  const mallory: Account = { id: 999_999, name: 'mallory', listName: '<b>Mallory</b>', bio: HOSTILE, followers: 1_234_567 };
  jack[20] = [...jack[20]!, mallory];
  writeNights(dir, 'jack', jack);
  writeNights(dir, 'amy', churningNights(21, 40).map((n) => n.map((a) => ({ ...a, name: `amy_${a.name}` }))));
  return dir;
}

describe.skipIf(!CHROMIUM)(`sgq history --html in Chromium${skipped}`, () => {
  const opened: OpenedPage[] = [];
  afterAll(async () => {
    for (const page of opened) await page.close();
  });

  it('renders from file:// with no console error and no request, draws both charts of each user, and carries the data -o json prints', async () => {
    const snapshots = store();
    const file = join(tempDir(), 'history of jack.html');
    const written = await sgq(['--sandbox', 'history', 'jack', 'amy', '--snapshot-dir', snapshots, '--html', file]);
    expect(written.exitCode, written.stderr).toBe(0);
    const json = await sgq(['--sandbox', 'history', 'jack', 'amy', '--snapshot-dir', snapshots, '-o', 'json']);
    expect(json.exitCode, json.stderr).toBe(0);

    const url = pathToFileURL(file).href;
    const page = await openInChromium(url);
    opened.push(page);
    // uPlot draws on a canvas per chart: wait until each has pixels painted.
    const painted = await page.evaluate<number[] | null>(`(async () => {
      // Each frame until the charts are painted, within a deadline.
      for (const deadline = performance.now() + 30000; performance.now() < deadline; await new Promise((r) => requestAnimationFrame(r))) {
        const canvases = [...document.querySelectorAll('.uplot canvas')];
        const counts = canvases.map((c) => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let k = 3; k < d.length; k += 4) if (d[k] !== 0) n++; return n; });
        if (counts.length === 4 && counts.every((n) => n > 100)) return counts;
      }
      return null;
    })()`);
    expect(painted, 'four charts with painted pixels').not.toBeNull();
    expect(await page.evaluate<number>(`document.querySelectorAll('.uplot').length`)).toBe(4);

    const data = await page.evaluate<string>(`document.getElementById('sgq-history').textContent`);
    expect(JSON.parse(data)).toEqual(JSON.parse(json.stdout));

    // Hostile text stayed text: no script of it ran, no element of it exists, and it reads as written.
    expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    expect(await page.evaluate<number>(`document.querySelectorAll('img, b').length`)).toBe(0);
    expect(await page.evaluate<boolean>(`[...document.querySelectorAll('td.bio')].some((td) => td.textContent === ${JSON.stringify(HOSTILE)})`)).toBe(true);
    expect(await page.evaluate<boolean>(`[...document.querySelectorAll('td.name')].some((td) => td.textContent.startsWith('<b>Mallory</b>'))`)).toBe(true);

    expect(page.errors).toEqual([]);
    expect(page.requests).toEqual([url]);
    // Within the page's budget: under 1 MB besides its data.
    const html = readFileSync(file, 'utf8');
    const dataBytes = Buffer.byteLength(/id="sgq-history">([^<]*)</.exec(html)![1]!);
    const listBytes = [...html.matchAll(/<details[\s\S]*?<\/details>/g)].reduce((n, m) => n + Buffer.byteLength(m[0]), 0);
    expect(Buffer.byteLength(html) - dataBytes - listBytes).toBeLessThan(1024 * 1024);
  });

  it('lists who came and who left at each snapshot, newest first', async () => {
    const snapshots = store();
    const file = join(tempDir(), 'page.html');
    expect((await sgq(['--sandbox', 'history', 'jack', '--snapshot-dir', snapshots, '--html', file])).exitCode).toBe(0);
    const page = await openInChromium(pathToFileURL(file).href);
    opened.push(page);
    const summaries = await page.evaluate<string[]>(`[...document.querySelectorAll('summary')].map((s) => s.textContent)`);
    expect(summaries).toHaveLength(20);
    expect(summaries[0]).toMatch(/^2026-01-21 03:15 UTC: \+\d+ came, −\d+ left$/);
    expect(summaries.at(-1)).toMatch(/^2026-01-02 03:15 UTC/);
    const records = (await sgq(['--sandbox', 'history', 'jack', '--snapshot-dir', snapshots])).stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { gained: number; lost: number });
    const last = records.at(-1)!;
    expect(summaries[0]).toBe(`2026-01-21 03:15 UTC: +${last.gained} came, −${last.lost} left`);
    expect(page.errors).toEqual([]);
  });
});
