import { rmSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { parseFlags } from '../args.js';
import { type Command, ExitCode } from '../command.js';
import { parseUpdateArgs } from '../pkg/args.js';
import { diffTrees, formatChanges } from '../pkg/diff.js';
import { conflictLine } from '../conflicts.js';
import { heldProgress } from '../pkg/progress.js';
import { KnownCredentials, keepSecrets } from '../pkg/secrets.js';
import { updatePackage } from '../pkg/update.js';

const help = `Usage: kdelta pkg diff [<local-dir>][@<ref>]

Show what \`kdelta pkg update\` would change in a local package, resource by resource, without
changing anything: resources added (+), deleted (-) and changed (~, with each changed field
path such as .spec.replicas), non-resource files, the Kptfile, and every conflict (a local
change that upstream would override).

  <local-dir>    the package; default: the current directory.
  <ref>          branch, tag or commit; default: the Kptfile's upstream ref.

The Kptfile's update strategy applies. Nothing is written. Output on stdout; progress on
stderr, or only the error on failure. Exit 0 whether or not there are changes; 1 on failure.
`;

const command: Command = {
  path: ['pkg', 'diff'],
  summary: 'show what a pkg update would change, resource by resource',
  help,
  async run(argv, rawIo) {
    const known = new KnownCredentials(rawIo.env);
    return keepSecrets(known, rawIo, async (io) => {
      const flags = parseFlags(argv, {});
      const args = parseUpdateArgs(flags.positionals, { cwd: io.cwd });
      known.addFromPackage(args.pkgPath);
      const progress = heldProgress(io);
      const summary = await updatePackage(
        { pkgPath: args.pkgPath, ref: args.ref, strategy: undefined, displayRoot: io.cwd, dryRun: true },
        { cwd: io.cwd, env: io.env, progress: progress.line, notice: progress.notice, scratch: [], credentials: known.byRepo },
      );
      try {
        const changes = diffTrees(args.pkgPath, summary.resultPath!);
        progress.flush();
        const text = formatChanges(changes);
        io.stdout(text || 'No changes.\n');
        for (const c of summary.conflicts) io.stdout(`! conflict: ${conflictLine(c, { dir: c.package, verdict: true })}\n`);
        io.stderr(
          `Nothing written: ${args.pkgPath === io.cwd ? 'the package' : `"${relative(io.cwd, args.pkgPath)}"`} is as it was (kdelta pkg update makes these changes).\n`,
        );
      } finally {
        rmSync(dirname(summary.resultPath!), { recursive: true, force: true });
      }
      return ExitCode.ok;
    });
  },
};

export default command;
