import { type Command, UsageError } from '../command.js';
import { parseFlags, stringFlag } from '../args.js';
import { DEFAULT_CONFIG_DIR, LOCAL_STATUS_STATES, listDownstreamStatuses, setDownstreamStatus, type LocalStatusState } from '@kdelta/run';

const help = `Usage: kdelta status set <downstream> <name> <success|failure|pending>
                  [--commit <sha>] [--description <text>]
       kdelta status list
       (both: [--config <dir>] [--proposals-dir <dir>])

The local forge's health signals: what Flux or Argo CD post on GitHub as a commit status, a
person says here, for a rollout whose policy names a health signal (spec.rollout.health.name):
the next wave is proposed only when that status is success on each downstream of the wave
before, on the head of its branch (the commit that holds the merge). A failure halts the
rollout; pending, or none yet, waits.

set: <downstream> is a Repository of the control resources, by name or by its repository's
path or URL; <name> the status's name (spec.rollout.health.name). The status is set on the head
of the Repository's branch, or on --commit. It replaces the one of that name on that commit.
Kept in <proposals-dir>/statuses.json, written whole at once.

list: every status set, one line each.

Flags:
  --commit <sha>          the commit (a full id, as \`git rev-parse\` prints it; default: the
                          head of the Repository's branch)
  --description <text>    why, shown where the rollout waits or halts
  --config <dir>          the control resources (default ${DEFAULT_CONFIG_DIR})
  --proposals-dir <dir>   the local forge's records (default <config>/proposals)
`;

const FLAGS = {
  config: { type: 'string' },
  'proposals-dir': { type: 'string' },
  commit: { type: 'string' },
  description: { type: 'string' },
} as const;

const command: Command = {
  path: ['status'],
  summary: "set or list the local forge's health statuses of downstream commits (rollout waves)",
  help,
  async run(args, io) {
    const flags = parseFlags(args, FLAGS);
    const [action, ...rest] = flags.positionals;
    const options = {
      cwd: io.cwd,
      config: stringFlag(flags, 'config'),
      proposalsDir: stringFlag(flags, 'proposals-dir'),
      env: io.env,
    };
    if (action === 'list') {
      if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
      for (const f of ['commit', 'description'])
        if (stringFlag(flags, f) !== undefined) throw new UsageError(`--${f} is for \`kdelta status set\``);
      const statuses = await listDownstreamStatuses(options);
      if (statuses.length === 0) {
        io.stdout('no status set yet (`kdelta status set <downstream> <name> <state>`)\n');
        return 0;
      }
      const lines = statuses.map(
        (s) => `${s.downstream}  ${s.commit.slice(0, 12)}  ${s.name}  ${s.state}${s.description ? `  ${s.description}` : ''}  (${s.at})`,
      );
      io.stdout(`${lines.join('\n')}\n`);
      return 0;
    }
    if (action !== 'set')
      throw new UsageError(action === undefined ? 'set or list? (see --help)' : `unknown action "${action}": set or list`);
    if (rest.length !== 3) throw new UsageError('set needs <downstream> <name> <success|failure|pending>');
    const [downstream, name, state] = rest as [string, string, string];
    if (!(LOCAL_STATUS_STATES as readonly string[]).includes(state))
      throw new UsageError(`the state must be one of ${LOCAL_STATUS_STATES.join(', ')} (got "${state}")`);
    if (name.trim() === '') throw new UsageError('the status needs a name (spec.rollout.health.name)');
    const { status, file } = await setDownstreamStatus({
      ...options,
      downstream,
      name,
      state: state as LocalStatusState,
      commit: stringFlag(flags, 'commit'),
      description: stringFlag(flags, 'description'),
    });
    io.stdout(`${status.name} ${status.state} on ${status.downstream} ${status.commit.slice(0, 12)} (${file})\n`);
    return 0;
  },
};

export default command;
