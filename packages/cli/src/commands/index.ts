import type { Command } from '../command.js';

// One line per command module; each module default-exports its Command.
export const commands: readonly Command[] = [];
