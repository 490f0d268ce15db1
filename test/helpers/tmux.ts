import { execa, execaSync } from 'execa';
import { afterAll } from 'vitest';

/** A word for `sh -c`: single-quoted, its own quotes escaped. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * A tmux server of the test file's own (its socket named `sgq-NAME-PID`), killed after the
 * file's tests: panes of a given size are a real terminal.
 */
export function useTmux(name: string) {
  const socket = `sgq-${name}-${process.pid}`;
  afterAll(() => {
    execaSync('tmux', ['-L', socket, 'kill-server'], { reject: false });
  });
  return (...args: string[]) => execa('tmux', ['-L', socket, '-f', '/dev/null', ...args], { reject: false });
}
