import { type Command, UsageError } from '../command.js';
import { oneOf, parseFlags, stringFlag } from '../args.js';
import { DEFAULT_CONFIG_DIR, dashboardRepositoryProblem, parseShard, readFleetDashboard, RunError } from '@kdelta/run';

const help = `Usage: kdelta dashboard [--config <dir>] [--forge local|github] [--proposals-dir <dir>]
                 [--dashboard-repo <owner/name>] [--mode variants|updates|both] [--shard k/n]

Print the fleet dashboard a run keeps: every variant by its state, problems first, with the
boxes a person ticks for the next run (retry, allow these removals, re-propose). The local
forge's is the Markdown file <config>/proposals/dashboard.md; GitHub's (--forge github) is the
issue "kdelta dashboard" of the control repository (token and server as for
\`kdelta run --forge github\`). A run with --mode or --shard keeps a dashboard of its own: give
the same ones to read it. Tick a box with \`kdelta decide --dashboard\` (local forge), or on
GitHub's page. Exit 1 when no run has kept a dashboard yet.

Flags:
  --config <dir>              the control resources (default ${DEFAULT_CONFIG_DIR})
  --forge local|github        where the dashboard is (default local)
  --proposals-dir <dir>       the local forge's records (default <config>/proposals)
  --dashboard-repo <r>        GitHub: the control repository, owner/name (default: the work
                              tree's origin on the GitHub server)
  --mode variants|updates|both, --shard k/n
                              the run's mode and shard whose dashboard to read (default both, none)
`;

/** The dashboard options every command that reads it takes. */
export const DASHBOARD_FLAGS = {
  config: { type: 'string' },
  forge: { type: 'string' },
  'proposals-dir': { type: 'string' },
  'dashboard-repo': { type: 'string' },
  mode: { type: 'string' },
  shard: { type: 'string' },
} as const;

/** The dashboard options from flags parsed with {@link DASHBOARD_FLAGS}. */
export function dashboardOptions(
  flags: ReturnType<typeof parseFlags>,
  io: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> },
  forges: readonly ('local' | 'github')[] = ['local', 'github'],
): Parameters<typeof readFleetDashboard>[0] {
  const forge = oneOf('forge', stringFlag(flags, 'forge'), forges, 'local');
  const repository = stringFlag(flags, 'dashboard-repo');
  const problem = repository !== undefined ? dashboardRepositoryProblem(repository) : undefined;
  if (problem) throw new UsageError(`--dashboard-repo: ${problem}`);
  const shard = stringFlag(flags, 'shard');
  let parsedShard;
  try {
    parsedShard = shard !== undefined ? parseShard(shard) : undefined;
  } catch (error) {
    throw new UsageError(error instanceof RunError ? error.message : String(error));
  }
  return {
    cwd: io.cwd,
    config: stringFlag(flags, 'config'),
    forge,
    proposalsDir: stringFlag(flags, 'proposals-dir'),
    repository,
    mode: oneOf('mode', stringFlag(flags, 'mode'), ['variants', 'updates', 'both'] as const, 'both'),
    shard: parsedShard,
    github: { env: io.env },
  };
}

const command: Command = {
  path: ['dashboard'],
  summary: 'print the fleet dashboard (local or GitHub)',
  help,
  async run(args, io) {
    const flags = parseFlags(args, DASHBOARD_FLAGS);
    if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
    const options = dashboardOptions(flags, io);
    const { record, target } = await readFleetDashboard(options);
    if (!record) {
      throw new RunError(
        'no-dashboard',
        options.forge === 'local'
          ? `no dashboard yet (${target.name}.md among the local forge's records): \`kdelta run\` writes it`
          : `no dashboard yet (an issue "${target.title}" in ${target.repository}): \`kdelta run --forge github\` opens it`,
      );
    }
    io.stdout(record.body.endsWith('\n') ? record.body : `${record.body}\n`);
    return 0;
  },
};

export default command;
