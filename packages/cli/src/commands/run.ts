import { resolve } from 'node:path';
import { type Command, UsageError } from '../command.js';
import { booleanFlag, oneOf, parseFlags, stringFlag } from '../args.js';
import { DEFAULT_CONCURRENCY, run } from '../run/run.js';
import { LiveProgress, progressLine } from '../run/progress.js';
import { renderTable, reportJson } from '../run/report.js';
import { parseShard } from '../run/shard.js';
import { writeFileAtomic } from '../util/fs.js';

const help = `Usage: kdelta run [--config <dir>] [--forge local] [--mode variants|updates|both] [--dry-run]
           [--shard k/n] [--concurrency n] [--report <file.json>] [--proposals-dir <dir>] [--no-render]

The main job. Reads the control resources under --config (Porch's Repository and PackageVariant
in config.porch.kpt.dev/v1alpha1, PackageVariantSet in v1alpha2, kdelta.dev/v1alpha1
RunSettings, and any other object for selectors and config injection), expands the sets, and for
each variant: resolves the upstream (tag <package>/<revision>, else tag <revision>, else a branch
or commit) and the downstream, gets the package, applies the variant's mutations in Porch's order
and, when the result differs from the downstream's branch, pushes branch kdelta/<variant> and
opens or updates its proposal. Nothing new: nothing is pushed or written. A branch with commits
kdelta did not make is left alone and reported. A package whose variant is gone gets a proposal
removing it (deletionPolicy delete) or removing only its ownership annotation (orphan).

Update mode: every package of the control repository itself (the git repository --config is in,
its current branch) whose Kptfile has a git upstream is updated the same way — a 3-way merge
from its upstreamLock to the commit its upstream.git.ref names now, keeping every local edit —
one proposal per package on branch kdelta/update-<package path>, pushed to the repository's
origin (or to the repository itself when it has none).

Flags:
  --config <dir>         the control resources (default .kdelta)
  --forge local          where proposals live; local: Markdown files under --proposals-dir
  --proposals-dir <dir>  the local forge's records (default <config>/proposals)
  --mode <mode>          variants, updates or both (default both)
  --dry-run              compute everything, push and write nothing
  --shard k/n            only the variants whose name hashes to shard k of n
  --concurrency <n>      variants at a time (default ${DEFAULT_CONCURRENCY})
  --report <file.json>   every result as JSON
  --no-render            do not run the package's Kptfile pipeline after the mutations (by
                         default it runs, as Porch renders; a failing function fails that
                         variant alone)

Progress goes to stderr: one line per variant, or on a terminal a status block redrawn in place
(failures stay above it); the table (variant, downstream, action, proposal, conflicts) to
stdout. Exit 0 when every variant succeeded, 1 when any failed or the control
resources are invalid (then nothing is pushed or written; stderr names file, document and field).
`;

const command: Command = {
  path: ['run'],
  summary: "propose every variant's package to its downstream repository",
  help,
  async run(args, io) {
    const flags = parseFlags(args, {
      config: { type: 'string' },
      forge: { type: 'string' },
      mode: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'no-render': { type: 'boolean' },
      shard: { type: 'string' },
      concurrency: { type: 'string' },
      report: { type: 'string' },
      'proposals-dir': { type: 'string' },
    });
    if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
    const forge =
      stringFlag(flags, 'forge') === undefined
        ? undefined
        : oneOf('forge', stringFlag(flags, 'forge'), ['local', 'github'] as const, 'local');
    const mode =
      stringFlag(flags, 'mode') === undefined
        ? undefined
        : oneOf('mode', stringFlag(flags, 'mode'), ['variants', 'updates', 'both'] as const, 'both');
    const shardText = stringFlag(flags, 'shard');
    let shard;
    try {
      shard = shardText === undefined ? undefined : parseShard(shardText);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const concurrencyText = stringFlag(flags, 'concurrency');
    let concurrency: number | undefined;
    if (concurrencyText !== undefined) {
      concurrency = Number(concurrencyText);
      if (!/^\d+$/.test(concurrencyText) || concurrency < 1 || concurrency > 64) {
        throw new UsageError(`--concurrency must be an integer from 1 to 64 (got "${concurrencyText}")`);
      }
    }
    const reportFile = stringFlag(flags, 'report');

    const terminal = io.stderrTerminal;
    const live = terminal ? new LiveProgress({ columns: terminal.columns, startedAt: Date.now() }) : undefined;
    const timer = live ? setInterval(() => io.stderr(live.tick(Date.now())), 1000) : undefined;
    timer?.unref();
    const report = await run({
      cwd: io.cwd,
      config: stringFlag(flags, 'config'),
      forge,
      mode,
      dryRun: booleanFlag(flags, 'dry-run'),
      render: !booleanFlag(flags, 'no-render'),
      shard,
      concurrency,
      proposalsDir: stringFlag(flags, 'proposals-dir'),
      env: io.env,
      onProgress: (e) => {
        const text = live ? live.update(e, Date.now()) : progressLine(e);
        if (text) io.stderr(text);
      },
    }).finally(() => {
      clearInterval(timer);
      if (live) io.stderr(live.finish());
    });
    for (const w of report.warnings) io.stderr(`warning: ${w}\n`);
    io.stdout(renderTable(report));
    if (reportFile) await writeFileAtomic(resolve(io.cwd, reportFile), reportJson(report));
    return report.failed > 0 ? 1 : 0;
  },
};

export default command;
