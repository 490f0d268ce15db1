import { Help, type Command, type HelpConfiguration, type Option } from 'commander';
import { fitHelpText } from './wrap.js';

// How every help is laid out: Commander's own layout, plus the options a command inherits
// from the ones above it (as gh's INHERITED FLAGS), and the text after the options (notes,
// examples, footer) fitted to the same width as the rest.

const INHERITED_HEADING = 'Inherited options:';

/** The text printed after a command's options, fitted when the help is formatted. */
const afterText = new WeakMap<Command, string>();

export function setHelpAfter(cmd: Command, text: string): void {
  afterText.set(cmd, text);
}

/** `--version` belongs to `sgq` alone: `sgq graph --version` is no way to ask for it (help and completion). */
export const inherited = (option: { long?: string }): boolean => option.long !== '--version';

export function helpLayout(): HelpConfiguration {
  return {
    // Commander leaves a description unwrapped when under 40 columns are left for it: the
    // metadata verbs (`current-following [options] <user...>`) leave 39 at 80 columns.
    minWidthToWrap: 30,
    showGlobalOptions: true,
    visibleGlobalOptions(this: Help, cmd: Command): Option[] {
      return Help.prototype.visibleGlobalOptions.call(this, cmd).filter(inherited);
    },
    formatItemList(this: Help, heading: string, items: string[], helper: Help): string[] {
      return Help.prototype.formatItemList.call(this, heading === 'Global Options:' ? INHERITED_HEADING : heading, items, helper);
    },
    formatHelp(this: Help, cmd: Command, helper: Help): string {
      const help = Help.prototype.formatHelp.call(this, cmd, helper);
      const after = afterText.get(cmd);
      return after === undefined ? help : `${help}${fitHelpText(after, helper.helpWidth ?? 80)}\n`;
    },
  };
}
