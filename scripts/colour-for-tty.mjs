#!/usr/bin/env node
// Runs a command (`node scripts/colour-for-tty.mjs vitest run ...`) with colour codes only when
// stdout is a terminal. vitest colours its output unless NO_COLOR is set, terminal or not, so a
// log piped to a file fills with escape codes. A FORCE_COLOR the caller sets still wins.
import { spawnSync } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: node scripts/colour-for-tty.mjs <command> [args...]\n');
  process.exit(2);
}
const env = { ...process.env };
if (!process.stdout.isTTY && !('FORCE_COLOR' in env)) env.NO_COLOR = '1';
const result = spawnSync(command, args, { stdio: 'inherit', env });
if (result.error) {
  process.stderr.write(`${command}: ${result.error.message}\n`);
  process.exit(1);
}
if (result.signal) process.kill(process.pid, result.signal);
process.exit(result.status ?? 1);
