import { apiCommand } from '../commands/api/definition.js';
import { cacheCommand } from '../commands/cache/definition.js';
import { completionCommand } from '../commands/completion/definition.js';
import { configCommand } from '../commands/config/definition.js';
import { creditsCommand } from '../commands/credits/definition.js';
import type { CommandDefinition } from './define.js';
import { describeCommand } from '../commands/describe/definition.js';
import { datasetCommand } from '../commands/dataset/definition.js';
import { diffCommand } from '../commands/diff/definition.js';
import { fmtCommand } from '../commands/fmt/definition.js';
import { historyCommand } from '../commands/history/definition.js';
import { routeCommands } from '../commands/routes/definition.js';
import { sandboxCommand } from '../commands/sandbox/definition.js';
import { snapshotsCommand } from '../commands/snapshots/definition.js';

/** Every command of sgq, in the order the help lists them: the routes first. */
export function commandDefinitions(): CommandDefinition[] {
  return [...routeCommands(), apiCommand, configCommand, creditsCommand, cacheCommand, sandboxCommand, diffCommand, historyCommand, snapshotsCommand, datasetCommand, fmtCommand, describeCommand, completionCommand];
}
