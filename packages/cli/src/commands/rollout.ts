import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { writeFileAtomic } from '@kdelta/kptfile-model';
import { type Command, UsageError } from '../command.js';
import { parseFlags, stringFlag } from '../args.js';
import {
  dashboardBoxes,
  DEFAULT_CONFIG_DIR,
  readFleetDashboard,
  RunError,
  selectRolloutBox,
  tickLine,
  type RolloutTickKind,
} from '@kdelta/run';
import { DASHBOARD_FLAGS, dashboardOptions } from './dashboard.js';

const help = `Usage: kdelta rollout advance|halt|resume <policy> <revision>
              [--config <dir>] [--proposals-dir <dir>] [--mode variants|updates|both] [--shard k/n]

Tick a rollout's box on the local forge's dashboard, as a person would by writing \`- [x]\` for
\`- [ ]\` in its Rollouts section: the next \`kdelta run\` acts on it, and nothing happens before.
(On GitHub, tick the box on the dashboard issue's page.)

  advance   propose the rollout's next wave now, whatever it waits on (merges, soak, a signal)
  halt      propose nothing more of that revision (not even to the wave it is at), until resumed
  resume    lift a halt a box made (a halt in the policy's spec.rollout.halted stays until the
            policy drops it; a failed health signal, until the signal is green)

<policy> is the UpdatePolicy's name; <revision> the upstream tag (v1.5.0, or basens/v1.5.0).
The dashboard keeps a box's halt or advance until resumed or the rollout is done. A run with
--mode or --shard keeps a dashboard of its own, and a box acts on that one's runs only: tick it
on each shard's dashboard (or halt in the policy, which every shard reads). Exit 1 when no open
box is the one named.

Flags:
  --config <dir>          the control resources (default ${DEFAULT_CONFIG_DIR})
  --proposals-dir <dir>   the local forge's records (default <config>/proposals)
  --mode variants|updates|both, --shard k/n
                          the dashboard of a run with this mode and shard (default both, none)
`;

const ACTIONS: Readonly<Record<string, RolloutTickKind>> = {
  advance: 'advance-rollout',
  halt: 'halt-rollout',
  resume: 'resume-rollout',
};

const command: Command = {
  path: ['rollout'],
  summary: "advance, halt or resume a rollout on the local forge's dashboard (kdelta run acts on it)",
  help,
  async run(args, io) {
    const flags = parseFlags(args, DASHBOARD_FLAGS);
    if (stringFlag(flags, 'forge') !== undefined && stringFlag(flags, 'forge') !== 'local')
      throw new UsageError("ticks the local forge's dashboard only: on GitHub, tick the box on the dashboard issue");
    if (stringFlag(flags, 'dashboard-repo') !== undefined)
      throw new UsageError('--dashboard-repo is for GitHub: on GitHub, tick the box on its page');
    const [action, policy, revision, ...rest] = flags.positionals;
    const kind = action !== undefined ? ACTIONS[action] : undefined;
    if (kind === undefined)
      throw new UsageError(
        action === undefined ? 'advance, halt or resume? (see --help)' : `unknown action "${action}": advance, halt or resume`,
      );
    if (policy === undefined || revision === undefined) throw new UsageError(`${action} needs <policy> <revision>`);
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
    const { record, file } = await readFleetDashboard(dashboardOptions(flags, io, ['local']));
    if (!record || !file) throw new RunError('no-dashboard', "no dashboard yet among the local forge's records: `kdelta run` writes it");
    const shown = relative(io.cwd, file) || file;
    const box = selectRolloutBox(dashboardBoxes(record.body), kind, policy, revision);
    // the file as it is now: a run may have rewritten it since it was read
    const text = await readFile(file, 'utf8');
    const now = dashboardBoxes(text).find((b) => b.kind === box.kind && b.subject === box.subject && !b.ticked);
    if (!now) throw new RunError('no-such-box', `${shown} changed meanwhile: run the command again`);
    await writeFileAtomic(file, tickLine(text, now.line));
    io.stdout(`ticked on ${shown}: ${now.label}\nthe next \`kdelta run\` acts on it\n`);
    return 0;
  },
};

export default command;
