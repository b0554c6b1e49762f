export { main, defaultIo } from './main.js';
export type { Command, Io } from './command.js';
export { UsageError, ExitCode } from './command.js';
export { CliInputError, exitCodeFor, formatError } from './errors.js';
