// The exit-code contract. The README's table is written from this one; change both together.
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  config: 3,
  service: 4,
  expired: 5,
  unavailable: 6,
  network: 7,
  /** Another sgq run holds the lock of the same --out or state file (--wait-lock waits). */
  locked: 8,
  interrupted: 130,
  terminated: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure the user can act on: one line of `message`, an optional `hint` saying what to do. */
export class SgqError extends Error {
  constructor(
    readonly exitCode: ExitCodeValue,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'SgqError';
  }
}

export const usageError = (message: string, hint?: string) => new SgqError(ExitCode.usage, message, hint);
export const configError = (message: string, hint?: string) => new SgqError(ExitCode.config, message, hint);

/**
 * When several users fail differently, the run exits with the most serious failure:
 * an interruption, then a rejected key, then the network, then an expired subscription,
 * then a placeholder route, then error records.
 */
const severity: readonly number[] = [
  ExitCode.ok,
  ExitCode.service,
  ExitCode.unavailable,
  ExitCode.expired,
  ExitCode.network,
  ExitCode.locked,
  ExitCode.internal,
  ExitCode.usage,
  ExitCode.config,
  ExitCode.interrupted,
  ExitCode.terminated,
];

export function worstExitCode(codes: Iterable<number>): number {
  let worst: number = ExitCode.ok;
  for (const code of codes) if (severity.indexOf(code) > severity.indexOf(worst)) worst = code;
  return worst;
}

/** Turn anything thrown into an SgqError, so every failure ends as one line with a code. */
export function toSgqError(error: unknown): SgqError {
  if (error instanceof SgqError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new SgqError(
    ExitCode.internal,
    `internal error: ${firstLine(message)}`,
    'this is a bug in sgq; rerun with --verbose and report it',
  );
}

/** `message; hint` as one line; a message's closing full stop (a service's words) does not meet the `;`. */
export function failureLine(message: string, hint?: string): string {
  return hint ? `${message.replace(/\.$/, '')}; ${hint}` : message;
}

export function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
