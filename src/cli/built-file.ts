import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A file the build puts beside the bundle (a worker thread's script), if sgq runs from dist/;
 * undefined when it runs from its sources (tests), where the caller does the work in this thread.
 */
export function builtFile(name: string): string | undefined {
  if (typeof __dirname !== 'string') return undefined;
  const file = join(__dirname, name);
  return existsSync(file) ? file : undefined;
}
