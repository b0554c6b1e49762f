// One `pkg update <dir>@<ref>` through the library, as a process of its own: what a command
// line built on it would cost, for a fair comparison with kpt (also a process).
import { resolve } from 'node:path';
import { updatePackage } from '@kdelta/package-update';

const [dir, ref] = process.argv.slice(2);
await updatePackage({ dir: resolve(dir), ref, strategy: 'resource-merge', cwd: process.cwd(), env: process.env });
