import { apiCommand } from './api.js';
import { cacheCommand } from './cache.js';
import { completionCommand } from './completion.js';
import { configCommand } from './config.js';
import { creditsCommand } from './credits.js';
import type { CommandDefinition } from './define.js';
import { describeCommand } from './describe.js';
import { datasetCommand } from './dataset.js';
import { diffCommand } from './diff.js';
import { fmtCommand } from './fmt.js';
import { historyCommand } from './history.js';
import { routeCommands } from './routes.js';
import { sandboxCommand } from './sandbox.js';
import { snapshotsCommand } from './snapshots.js';

/** Every command of sgq, in the order the help lists them: the routes first. */
export function commandDefinitions(): CommandDefinition[] {
  return [...routeCommands(), apiCommand, configCommand, creditsCommand, cacheCommand, sandboxCommand, diffCommand, historyCommand, snapshotsCommand, datasetCommand, fmtCommand, describeCommand, completionCommand];
}
