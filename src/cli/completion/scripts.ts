import type { Command } from 'commander';
import { bashScript } from './bash.js';
import { fishScript } from './fish.js';
import { completionTree, type Shell } from './tree.js';
import { zshScript } from './zsh.js';

export { SHELLS, isShell, type Shell } from './tree.js';

/**
 * The completion script for `shell`, generated from the command tree under `root`. Pure and
 * deterministic: the same tree gives the same bytes, so the copies in completions/ can be
 * compared with it.
 */
export function completionScript(shell: Shell, root: Command): string {
  const tree = completionTree(root);
  switch (shell) {
    case 'bash':
      return bashScript(tree);
    case 'zsh':
      return zshScript(tree);
    case 'fish':
      return fishScript(tree);
  }
}
