import { defaultBranch } from '@kdelta/git-source';
import { booleanFlag, stringFlag, parseFlags } from '../args.js';
import type { Command } from '../command.js';
import { parseGetArgs } from '../pkg/args.js';
import { getPackage } from '@kdelta/package-update';
import { heldProgress } from '../progress.js';
import { KnownCredentials, keepSecrets } from '../pkg/secrets.js';

const help = `Usage: kdelta pkg get <repo>[.git]/<pkg-path>[@<ref>] [<local-dir>] [--strategy <s>]

Fetch a kpt package from a git repository (kpt's \`pkg get\`).

  <repo>         https or ssh URL, file:// URL or local path of a git repository; \`.git\`
                 separates the repository from the package directory (\`repo.git/dir@v1\`).
  <pkg-path>     directory of the package in the repository (default: the root).
  <ref>          branch, tag (\`<pkg-path>/<ref>\` tried first) or commit; default: the
                 repository's default branch.
  <local-dir>    destination. A path that does not exist is used as is (missing parent
                 directories are created); an existing directory, \`.\` included, gets the
                 package in <local-dir>/<package name>. An existing package directory is
                 never written into: the command is refused.

Flags:
  --strategy     update strategy recorded in the Kptfile: resource-merge (default),
                 fast-forward or force-delete-replace.
  --allow-local-upstreams
                 let nested packages' Kptfiles name repositories on this machine (a path or
                 file:// URL); refused by default: package content may not read local files
                 (also KDELTA_ALLOW_LOCAL_UPSTREAMS=1).

The Kptfile records upstream (repo, directory, ref, strategy) and upstreamLock (the commit).
Remote subpackages are fetched too; every resource gets its \`# kpt-merge:\` comment.
Repositories are cached as partial clones under KDELTA_CACHE_DIR (default ~/.kdelta/repos).
Progress goes to stderr; nothing is written if the fetch fails or is interrupted.
Credentials (a token from KDELTA_GIT_TOKEN, git's credential helpers) go only to the
repositories you named: the package's own upstream and KDELTA_CREDENTIAL_REPOSITORIES (comma-
separated owner/repo, owner/*, host/path/repo, URLs, or whole hosts written as host or
host:port). A repository that only a nested package's Kptfile names, even on the same host, is
read without any; a private one fails naming that Kptfile and this setting.
`;

const command: Command = {
  path: ['pkg', 'get'],
  summary: 'fetch a package from git into a local directory',
  help,
  async run(argv, rawIo) {
    const known = new KnownCredentials(rawIo.env);
    known.hideArguments(argv);
    return keepSecrets(known, rawIo, async (io) => {
      const flags = parseFlags(argv, { strategy: { type: 'string' }, 'allow-local-upstreams': { type: 'boolean' } });
      const args = await parseGetArgs(flags.positionals, {
        cwd: io.cwd,
        strategy: stringFlag(flags, 'strategy'),
        defaultBranch: (repo, credentials) => defaultBranch({ repo, cwd: io.cwd, env: io.env, ...(credentials ? { credentials } : {}) }),
      });
      known.add(args.repo, args.credentials);
      const progress = heldProgress(io);
      const result = await getPackage({
        repo: args.repo,
        directory: args.directory,
        ref: args.ref,
        destination: args.destination,
        updateStrategy: args.updateStrategy,
        cwd: io.cwd,
        env: io.env,
        credentials: known.byRepo,
        ...(booleanFlag(flags, 'allow-local-upstreams') ? { allowLocalUpstreams: true } : {}),
        progress: progress.event,
      });
      progress.flush();
      io.stderr(
        `Fetched ${args.repo}${args.directory === '/' ? '' : args.directory}@${args.ref} (${result.commit.slice(0, 12)}) into ${result.destination}\n`,
      );
      return 0;
    });
  },
};

export default command;
