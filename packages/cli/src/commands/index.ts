import type { Command } from '../command.js';
import variantApply from './variant-apply.js';
import variantsetExpand from './variantset-expand.js';

// One line per command module; each module default-exports its Command.
export const commands: readonly Command[] = [
  variantApply,
  variantsetExpand,
];
