import { afterAll, beforeAll } from 'vitest';
import { DEMO_KEY, startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { relationFields } from '../../src/sandbox/records.js';
import { SHAPES, SHAPE_ENV, type Shape } from '../../src/sandbox/shapes.js';

export const CLOCK = new Date('2026-11-01T12:00:00Z');

export { SHAPES, type Shape };

type Relation = 'followers' | 'following';

/** The fields of a follower or following record in a shape, in the order the sandbox sends them. */
export const recordFields = (shape: Shape, relation: Relation = 'followers'): readonly string[] =>
  shape === 'spec' ? ['username', 'last_checked'] : relationFields(relation);

/** The field that holds a record's user name: `follower_username` for the service's followers, else `username`. */
export const nameField = (shape: Shape, relation: Relation = 'followers'): string => (shape === 'service' && relation === 'followers' ? 'follower_username' : 'username');

/** The field of a record's timestamp: `follower_last_checked` for the service's followers, else `last_checked`. */
export const checkedField = (shape: Shape, relation: Relation = 'followers'): string => (shape === 'service' && relation === 'followers' ? 'follower_last_checked' : 'last_checked');

/** The environment that makes `sgq --sandbox` serve records in `shape`. */
export const sandboxShapeEnv = (shape: Shape): Record<string, string> => ({ [SHAPE_ENV]: shape });

/**
 * A sandbox for the tests of one file, on a free loopback port, with a fixed clock; its
 * records in the service's shape unless `shape: 'spec'` is asked for.
 */
export function useSandbox(options: SandboxOptions = {}): {
  readonly sandbox: Sandbox;
  readonly shape: Shape;
  env: () => Record<string, string>;
  /** The field of a record's user name (see nameField). */
  name: (relation?: Relation) => string;
  /** The field of a record's timestamp (see checkedField). */
  checked: (relation?: Relation) => string;
} {
  const holder: { sandbox?: Sandbox } = {};
  const shape = options.shape ?? 'service';
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
    shape,
    env: () => ({ SGQ_BASE_URL: holder.sandbox!.url, SGQ_API_KEY: DEMO_KEY }),
    name: (relation) => nameField(shape, relation),
    checked: (relation) => checkedField(shape, relation),
  };
}
