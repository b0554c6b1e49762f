// Helpers the `pkg update` benchmark runs as processes of their own, so that each one's peak
// memory (max RSS) is its own:
//   node pkg-update-child.mjs floor <file>...   the floor: a `yaml` parse (and print) of the inputs
// and, as `node --import ./pkg-update-child.mjs <cli> …`, the peak memory of any command run so.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

if (process.env.KDELTA_BENCH_RSS_FILE) {
  const out = process.env.KDELTA_BENCH_RSS_FILE;
  process.on('exit', () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
}

if (process.argv[2] === 'floor') {
  const t0 = performance.now();
  for (const f of process.argv.slice(3)) {
    for (const d of parseAllDocuments(readFileSync(f, 'utf8'), { version: '1.1' })) d.toString();
  }
  process.stdout.write(JSON.stringify({ ms: performance.now() - t0 }));
}
