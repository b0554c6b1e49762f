#!/usr/bin/env node
// The command runs from one bundled file (scripts/bundle.mjs): node reads and compiles it at once
// instead of resolving and loading every module of every package.
import { main } from '../dist/kdelta.js';

process.exitCode = await main(process.argv.slice(2));
