import { booleanFlag, parseFlags, stringFlag } from '../args.js';
import { type Command, ExitCode } from '../command.js';
import { parseUpdateArgs } from '../pkg/args.js';
import { conflictLine, conflictReport } from '../conflicts.js';
import { updatePackage } from '@kdelta/package-update';
import { heldProgress } from '../progress.js';
import { replacedDirectoryNote } from '../util/replaced-dir.js';
import { KnownCredentials, keepSecrets } from '../pkg/secrets.js';

const help = `Usage: kdelta pkg update [<local-dir>][@<ref>] [--strategy <s>]

Pull upstream changes into a local package (kpt's \`pkg update\`).

  <local-dir>    the package (a directory with a Kptfile under the current directory);
                 default: the current directory.
  <ref>          branch, tag or commit to update to; default: the Kptfile's upstream ref.

Flags:
  --strategy     resource-merge: 3-way merge of every resource (origin = upstreamLock's
                   commit), the Kptfile (pipeline merge) and non-KRM files file by file;
                 fast-forward: fail if the package was changed locally since it was fetched;
                 force-delete-replace: replace the package with upstream's version.
                 The strategy is written into the Kptfile for later updates; without the
                 flag the Kptfile's strategy applies (default resource-merge).
  --allow-local-upstreams
                 let nested packages' Kptfiles name repositories on this machine (a path or
                 file:// URL); refused by default: package content may not read local files
                 (also KDELTA_ALLOW_LOCAL_UPSTREAMS=1).

Nested local subpackages are merged with their parent; remote subpackages (their own
upstream) are updated from their own upstream. The working tree need not be clean.
An update that fails leaves the package exactly as it was and prints only the error. Progress
goes to stderr, and so does the list of conflicts: fields local and upstream both changed (upstream wins, as in
kpt) and resources deleted upstream but kept because they were edited locally
(\`kdelta pkg diff\` shows them beforehand).

A "# kdelta:local" comment on a field's line in the local package pins the field: it keeps local's
value (and everything under it), whatever upstream does, in resources and the Kptfile alike, and
survives the update. Each pin upstream would have changed is listed on stderr as a decision,
never as a conflict.

Credentials (a token from KDELTA_GIT_TOKEN, git's credential helpers) go only to the
repositories you named: the package's own upstream and KDELTA_CREDENTIAL_REPOSITORIES (comma-
separated owner/repo, owner/*, host/path/repo, URLs, or whole hosts written as host or
host:port). A repository that only a nested package's Kptfile names, even on the same host, is
read without any; a private one fails naming that Kptfile and this setting.
`;

const command: Command = {
  path: ['pkg', 'update'],
  summary: 'merge upstream changes into a local package',
  help,
  async run(argv, rawIo) {
    const known = new KnownCredentials(rawIo.env);
    return keepSecrets(known, rawIo, async (io) => {
      const flags = parseFlags(argv, { strategy: { type: 'string' }, 'allow-local-upstreams': { type: 'boolean' } });
      const args = parseUpdateArgs(flags.positionals, { cwd: io.cwd, strategy: stringFlag(flags, 'strategy') });
      known.addFromPackage(args.pkgPath);
      const progress = heldProgress(io);
      const summary = await updatePackage({
        dir: args.pkgPath,
        ref: args.ref,
        ...(args.strategy ? { strategy: args.strategy } : {}),
        displayRoot: io.cwd,
        cwd: io.cwd,
        env: io.env,
        credentials: known.byRepo,
        ...(booleanFlag(flags, 'allow-local-upstreams') ? { allowLocalUpstreams: true } : {}),
        progress: progress.event,
      });
      progress.flush();
      // kpt decides these silently (upstream wins a field; a resource deleted upstream but edited
      // locally stays); saying where is what lets a user check or restore a local change
      io.stderr(conflictReport(summary.conflicts, (c) => conflictLine(c, { dir: c.package, verdict: true })));
      // pins are the user's own decisions: listed apart, never as conflicts
      const note = summary.written ? replacedDirectoryNote(args.pkgPath, io.cwd) : undefined;
      if (note && io.stderrTerminal) io.stderr(note);
      for (const d of summary.decisions) io.stderr(`${d.package}/${d.file}: ${d.resource}: ${d.message}\n`);
      return ExitCode.ok;
    });
  },
};

export default command;
