export { main, defaultIo } from './main.js';
export type { Command, Io } from './command.js';
export { UsageError, ExitCode } from './command.js';
