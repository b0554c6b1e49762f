// Helpers the `pkg update` benchmark runs as processes of their own, so that each one's peak
// memory (max RSS) and CPU time are its own:
//   node pkg-update-child.mjs floor <file>...   the floor: a `yaml` parse (and print) of the inputs
// and, as `node --import ./pkg-update-child.mjs <cli> …`, the peak memory and CPU time of any
// command run so. CPU time (user + system, of the node process: not of the git it starts) is what
// the work costs whatever else the machine does; wall time on a shared machine is not.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

if (process.env.KDELTA_BENCH_RSS_FILE) {
  const out = process.env.KDELTA_BENCH_RSS_FILE;
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(out, JSON.stringify({ rss: usage.maxRSS, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000 }));
  });
}

if (process.argv[2] === 'floor') {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (const f of process.argv.slice(3)) {
    for (const d of parseAllDocuments(readFileSync(f, 'utf8'), { version: '1.1' })) d.toString();
  }
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 }));
}
