// The shapes the sandbox serves records in, alone, so the command tree and the connection
// can name them without loading the sandbox.
export const SHAPES = ['service', 'spec'] as const;
export type Shape = (typeof SHAPES)[number];

/** The environment variable that picks the shape of `sgq --sandbox` runs. */
export const SHAPE_ENV = 'SGQ_SANDBOX_SHAPE';
