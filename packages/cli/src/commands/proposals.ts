import { type Command, UsageError } from '../command.js';
import { booleanFlag, parseFlags, stringFlag } from '../args.js';
import {
  dashboardRepositoryProblem,
  failureGroupLines,
  groupFailures,
  listProposals,
  parseMetadataBlock,
  PROPOSE_AGAIN_LABEL,
  renderFailureOfBody,
  rolloutLine,
  type SettingKey,
} from '@kdelta/run';
import { settingFlagSpecs, settingFlagsHelp, settingsFromFlags } from '../setting-flags.js';

/** The run settings that say where the proposals are: read as `kdelta run` reads them, over RunSettings. */
const SETTINGS: readonly SettingKey[] = ['forge', 'proposalsDir', 'branchPrefix'];

const help = `Usage: kdelta proposals [--config <dir>] [--forge local|github] [--proposals-dir <dir>]
                 [--branch-prefix <prefix>] [--dashboard-repo <owner/name>] [--json]

List the proposals: state, downstream, variant branch, conflicts, whether the package's render
failed (a RENDER column, when one did), title, and the upstream ref proposed and why ("latest release v0.4.1 of catalog/bucket").
Render failures are listed under the table, each distinct message once with the proposals it
affects, counted; a row names its message by number. The local forge's are the Markdown
records \`kdelta run --forge local\` keeps under <config>/proposals/<downstream>/<variant>.md;
GitHub's (--forge github) are the pull requests of kdelta's branches in each Repository of the
control resources on the GitHub server (token and server as for \`kdelta run --forge github\`:
GITHUB_TOKEN or GH_TOKEN, GITHUB_API_URL, GITHUB_SERVER_URL), the newest of each branch.

Under them, each rollout of an UpdatePolicy with waves, as the last run's dashboard keeps it:
revision, upstream package, policy, each wave's merged of due, the wave reached and the one
proposed to, what the next wave waits on (merges, a soak time, a health signal), halted and
why, advanced by hand (on GitHub, from the dashboard issue of the control repository:
--dashboard-repo, default the work tree's origin on the GitHub server). --json prints
{"proposals": [...], "rollouts": [...]}.

A proposal closed without being merged by a person is declined (on the local forge: its branch
deleted; on GitHub: its pull request closed, unmerged, by anyone but kdelta): kdelta run does
not propose the same upstream commit with the same variant again (a new upstream commit or a
change of the variant does, and the new proposal names the declined one). To undo a decline on
the local forge, delete its record; on GitHub, reopen the pull request, or, when it cannot be
reopened, add the label ${PROPOSE_AGAIN_LABEL} to it. The next run proposes it again.

The forge, the records' directory and the branch prefix are the run's: a flag, else the
RunSettings of --config (spec.forge, spec.proposalsDir, spec.branchPrefix), else the default.

Flags:
  --config <dir>         the control resources (default .kdelta)
  --dashboard-repo <r>   GitHub: the control repository, owner/name, whose dashboard holds the rollouts
  --json                 print them as JSON
${settingFlagsHelp(SETTINGS)}
`;

const command: Command = {
  path: ['proposals'],
  summary: "list the proposals (the local forge's records, or GitHub pull requests)",
  help,
  async run(args, io) {
    const flags = parseFlags(args, {
      config: { type: 'string' },
      json: { type: 'boolean' },
      'dashboard-repo': { type: 'string' },
      ...settingFlagSpecs(SETTINGS),
    });
    if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
    const dashboardRepository = stringFlag(flags, 'dashboard-repo');
    const problem = dashboardRepository !== undefined ? dashboardRepositoryProblem(dashboardRepository) : undefined;
    if (problem) throw new UsageError(`--dashboard-repo: ${problem}`);
    const { forge, proposals, rollouts, warnings } = await listProposals({
      cwd: io.cwd,
      config: stringFlag(flags, 'config'),
      settings: settingsFromFlags(flags, SETTINGS),
      env: io.env,
      dashboardRepository,
    });
    const rows = proposals.map((p) => {
      const meta = parseMetadataBlock(p.body);
      // merged, a render failure is history (the local forge's record drops it too)
      const renderFailed = p.state !== 'merged' && meta?.renderFailed === true;
      const render = renderFailed ? renderFailureOfBody(p.body) : undefined;
      return {
        state: p.state,
        downstream: p.downstream,
        head: p.head,
        base: p.base,
        conflicts: meta?.conflicts ?? 0,
        // which upstream ref the proposal brings, and why (`latest release v0.4.1 of catalog/bucket`)
        upstream: meta?.upstream ? { ref: meta.upstream.ref, reason: meta.upstream.reason } : undefined,
        // the package is proposed unrendered: its pipeline's failing function and error
        renderFailure: renderFailed
          ? { ...(render?.function ? { function: render.function } : {}), error: render?.error ?? 'render failed' }
          : undefined,
        title: p.title,
        file: p.url,
      };
    });
    for (const w of warnings) io.stderr(`warning: ${w}\n`);
    if (booleanFlag(flags, 'json')) {
      io.stdout(`${JSON.stringify({ proposals: rows, rollouts }, null, 2)}\n`);
      return 0;
    }
    // the fleet's rollouts, one line each, after everything about the proposals
    const rolloutText =
      rollouts.length > 0 ? `\n${rollouts.length} rollout(s):\n${rollouts.map((r) => `  ${rolloutLine(r)}`).join('\n')}\n` : '';
    if (rows.length === 0) {
      io.stdout(`no proposals\n${rolloutText}`);
      return 0;
    }
    // one line per distinct render failure under the table, however many proposals share it
    const renderMessage = (r: (typeof rows)[number]) =>
      r.renderFailure ? `${r.renderFailure.function ? `function ${r.renderFailure.function}: ` : ''}${r.renderFailure.error}` : undefined;
    const { groups, groupOf } = groupFailures(
      rows.flatMap((r) => {
        const message = renderMessage(r);
        return message === undefined ? [] : [{ message, member: `${r.downstream} ${r.head}` }];
      }),
      1,
    );
    // the RENDER column only when a render failed: a fleet that renders reads as before
    const withRender = groups.length > 0;
    const table = [
      ['STATE', 'DOWNSTREAM', 'BRANCH', 'CONFLICTS', ...(withRender ? ['RENDER'] : []), 'TITLE', 'UPSTREAM'],
      ...rows.map((r) => {
        const message = renderMessage(r);
        const render = message === undefined ? '-' : `failed [${groupOf(message)!.number}]`;
        return [
          r.state,
          r.downstream,
          r.head,
          String(r.conflicts),
          ...(withRender ? [render] : []),
          r.title,
          r.upstream?.reason ?? r.upstream?.ref ?? '-',
        ];
      }),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
    io.stdout(`${table.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n')}\n`);
    if (groups.length > 0) {
      const failed = rows.filter((r) => r.renderFailure).length;
      io.stdout(
        `\n${failed} proposal(s) hold their package unrendered (render failed; the next run renders again):\n${failureGroupLines(groups, 'proposal').join('\n')}\n`,
      );
    }
    const declined = rows.filter((r) => r.state === 'declined');
    if (declined.length > 0 && forge === 'github') {
      io.stdout(
        `\n${declined.length} declined: not proposed again from the same upstream commit and variant. To undo a decline, reopen the pull request, or (when it cannot be reopened) add the label ${PROPOSE_AGAIN_LABEL} to it, and run again:\n${declined.map((r) => `  ${r.file}`).join('\n')}\n`,
      );
    } else if (declined.length > 0) {
      io.stdout(
        `\n${declined.length} declined: not proposed again from the same upstream commit and variant. To undo a decline, delete its record and run again:\n${declined.map((r) => `  rm ${r.file}`).join('\n')}\n`,
      );
    }
    io.stdout(rolloutText);
    return 0;
  },
};

export default command;
