import { describe, expect, it } from 'vitest';
import { asksForLeftOut, needsLeftOut } from '../../src/cli/route-left-out.js';
import { routeLine } from '../../src/cli/route-main.js';
import { fastParse } from '../../src/cli/fast-parse.js';
import { routeCommands } from '../../src/cli/commands/routes.js';
import { globalOptions } from '../../src/cli/global-options.js';

// The flags whose parts dist/route-main.cjs leaves out: the launcher reads them on the line,
// the route bundle in the parsed values; both must agree on every such flag.

const FLAGS: [string[], boolean][] = [
  [['graph', 'followers', 'alice', '--jq', '.username'], true],
  [['graph', 'followers', 'alice', '--jq=.username'], true],
  [['--sandbox', 'graph', 'followers', 'alice'], true],
  [['graph', 'followers', 'alice', '--all', '--snapshot'], true],
  [['graph', 'followers', 'alice', '--all', '--snapshot', '--changes'], true],
  [['graph', 'followers', 'alice', '--all', '--snapshot', '--snapshot-dir', 'd'], true],
  [['graph', 'followers', 'alice', '--all', '--snapshot', '--key=username'], true],
  [['graph', 'followers', 'alice', '-q', '--limit', '3'], false],
  [['graph', 'followers', 'alice', '-o', 'csv', '--fields', 'username'], false],
];

describe('the flags the route bundle leaves to route-full', () => {
  it.each(FLAGS)('%j: on the line and once parsed alike', (argv, leftOut) => {
    expect(asksForLeftOut(argv)).toBe(leftOut);
    const fast = fastParse(argv, routeCommands(), globalOptions());
    expect(fast, 'the fast parser takes the line').toBeDefined();
    expect(needsLeftOut(fast!.globals)).toBe(leftOut);
  });

  it('a line that needs a left-out part is not run by the route bundle', async () => {
    const io = new Proxy({}, { get: () => { throw new Error('the line was run'); } });
    await expect(routeLine(['graph', 'followers', 'alice', '--jq', '.a'], io as never, (values) => !needsLeftOut(values))).resolves.toBeUndefined();
  });
});
