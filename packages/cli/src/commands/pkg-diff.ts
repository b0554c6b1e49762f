import { relative } from 'node:path';
import { diffPackage, formatChanges } from '@kdelta/package-update';
import { booleanFlag, parseFlags } from '../args.js';
import { type Command, ExitCode } from '../command.js';
import { conflictLine } from '../conflicts.js';
import { parseUpdateArgs } from '../pkg/args.js';
import { KnownCredentials, keepSecrets } from '../pkg/secrets.js';
import { heldProgress } from '../progress.js';
const help = `Usage: kdelta pkg diff [<local-dir>][@<ref>]

Show what \`kdelta pkg update\` would change in a local package, resource by resource, without
changing anything: resources added (+), deleted (-) and changed (~, with each changed field
path such as .spec.replicas), non-resource files, the Kptfile, and every conflict (a local
change that upstream would override).

  <local-dir>    the package; default: the current directory.
  <ref>          branch, tag or commit; default: the Kptfile's upstream ref.

Flags:
  --allow-local-upstreams
                 let nested packages' Kptfiles name repositories on this machine (see
                 \`kdelta pkg update --help\`; also KDELTA_ALLOW_LOCAL_UPSTREAMS=1).

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
      const flags = parseFlags(argv, { 'allow-local-upstreams': { type: 'boolean' } });
      const args = parseUpdateArgs(flags.positionals, { cwd: io.cwd });
      known.addFromPackage(args.pkgPath);
      const progress = heldProgress(io);
      const { changes, update } = await diffPackage({
        dir: args.pkgPath,
        ref: args.ref,
        displayRoot: io.cwd,
        cwd: io.cwd,
        env: io.env,
        credentials: known.byRepo,
        ...(booleanFlag(flags, 'allow-local-upstreams') ? { allowLocalUpstreams: true } : {}),
        progress: progress.event,
      });
      progress.flush();
      io.stdout(formatChanges(changes) || 'No changes.\n');
      for (const c of update.conflicts) io.stdout(`! conflict: ${conflictLine(c, { dir: c.package, verdict: true })}\n`);
      io.stderr(
        `Nothing written: ${args.pkgPath === io.cwd ? 'the package' : `"${relative(io.cwd, args.pkgPath)}"`} is as it was (kdelta pkg update makes these changes).\n`,
      );
      return ExitCode.ok;
    });
  },
};

export default command;
