// What bin/sgq.cjs takes from dist/ before the CLI itself loads (bundled as dist/launch.cjs):
// pre-rendered help, and the load of the CLI with its code cache.

export { loadCli } from './code-cache.js';
export { prerenderedHelp } from './prerendered-help.js';
