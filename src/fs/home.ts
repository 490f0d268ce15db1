// The platform and the home folder, for where sgq keeps its files (src/core/config.ts), without
// node:os at every start (some 0.15 ms of a one-page run): the platform is the process's, and
// HOME is nearly always set, so node:os loads only to ask the user database.

/** The platform Node runs on: os.platform() without node:os. */
export const platform = (): NodeJS.Platform => process.platform;

/** os.homedir(), loading node:os on first use; it throws when HOME is unset and the user database has no home. */
export const homedir = (): string => process.getBuiltinModule('node:os').homedir();
