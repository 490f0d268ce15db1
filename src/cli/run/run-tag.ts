/**
 * What makes a temporary file's name this run's own: the pid, and random digits in case a
 * killed run with the same pid left one behind. The name must be unique, not secret: every
 * such file is created exclusively or linked (a name taken makes that step fail, never
 * redirects a write), so Math.random serves, and a start does not pay some 4 ms for node:crypto.
 */
export function runTag(): string {
  return `${process.pid}.${Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, '0')}`;
}
