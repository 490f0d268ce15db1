// The shapes the sandbox serves records in, and the variables that set up `sgq --sandbox`,
// alone, so the command tree and the connection can name them without loading the sandbox.
export const SHAPES = ['service', 'spec'] as const;
export type Shape = (typeof SHAPES)[number];

/** The environment variable that picks the shape of `sgq --sandbox` runs. */
export const SHAPE_ENV = 'SGQ_SANDBOX_SHAPE';

/** The environment variable that makes the lists of `sgq --sandbox` runs churn (a daily rate, as `sgq sandbox --churn`). */
export const CHURN_ENV = 'SGQ_SANDBOX_CHURN';
