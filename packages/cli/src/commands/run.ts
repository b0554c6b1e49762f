import { resolve } from 'node:path';
import { type Command, UsageError } from '../command.js';
import { booleanFlag, type FlagSpec, type ParsedFlags, parseFlags, stringFlag } from '../args.js';
import { type CheckedSettings, dashboardRepositoryProblem, renderTable, reportJson, run, settingRow } from '@kdelta/run';
import { LiveProgress, progressLine } from '../run-progress.js';
import { FLAG_SETTINGS, settingFlagSpecs, settingFlagsHelp, settingsFromFlags, wrap } from '../setting-flags.js';
import { checkOutputPath, writeFileAtomic } from '@kdelta/kptfile-model';

/** Which flags RunSettings may set (`spec.budget, spec.github.labels, …`), from the settings table. */
const RUN_SETTINGS_NOTE = wrap(
  `The RunSettings resource may set ${FLAG_SETTINGS.flatMap((key) => settingRow(key).field ?? [])
    .map((field) => `spec.${field}`)
    .join(', ')}; a flag overrides it. Flags, RunSettings and the Action's inputs go by the same rules: a value one refuses, each refuses.`,
  96,
).join('\n');

const help = `Usage: kdelta run [--config <dir>] [--forge local|github] [--mode variants|updates|both] [--dry-run]
           [--shard k/n] [--concurrency n] [--report <file.json>] [--proposals-dir <dir>] [--no-render]
           [--branch-prefix <prefix>] [--budget n] [--max-removals n] [--label <name>]... [--assignee <user>]...
           [--reviewer <user>]... [--team-reviewer <team>]... [--draft always|never|conflicts]
           [--auto-merge merge|squash|rebase|false] [--signed-commits] [--allow-exec]
           [--allow-local-upstreams] [--credential-repository <pattern>]... [--no-dashboard]
           [--dashboard-repo <owner/name>]

The main job. Reads the control resources under --config (Porch's Repository and PackageVariant
in config.porch.kpt.dev/v1alpha1, PackageVariantSet in v1alpha2, kdelta.dev/v1alpha1
RunSettings, and any other object for selectors and config injection), expands the sets, and for
each variant: resolves the upstream (tag <package>/<revision>, else tag <revision>, else a branch
or commit) and the downstream, gets the package, applies the variant's mutations in Porch's order
and, when the result differs from the downstream's branch, pushes branch kdelta/<variant>
(see --branch-prefix) and opens or updates its proposal. Nothing new: nothing is pushed or
written. A branch with commits kdelta did not make (a human's branch that happens to have the
proposal's name included, even one with no commit of its own), or a pull request labelled
kdelta:stop, is left alone and reported; when the upstream or the variant of an open proposal
with such commits moves, they are carried forward: a 3-way merge from the branch's package,
pushed as a new commit on top of them (never a rewrite), the proposal naming them. A package whose variant is gone gets a proposal removing
it (deletionPolicy delete) or removing only its ownership annotation (orphan); a removal proposal
lists the package's local edits since kdelta last proposed it. At most --max-removals are proposed.

Conflicts: each one a reviewer can decide has a checkbox below the proposal's conflict table
("keep local <value> for <field> (<resource>)", or "take upstream ..."). Tick it on the pull
request, or change "- [ ]" to "- [x]" in the local forge's record: the next run rebuilds the
proposal with that value (local's is pinned with "# kdelta:local", so later updates keep it) and
changes nothing else; a tick that no longer matches a conflict is reported ignored.

Names: a variant's name is a Kubernetes object name (RFC 1123 subdomain: lowercase letters,
digits, "-" and "."). Two variants, or a variant and a package update, that would share a
proposal branch, a proposal record or a package directory of one repository (URLs compared
without credentials, a trailing "/" or ".git") are an error naming both, before anything is
pushed. A proposal's branch is never its base branch: such a variant fails and nothing is pushed.

Outputs: --report and --proposals-dir (and RunSettings spec.proposalsDir) are checked before the
first push; an unwritable one is an error naming the flag, and nothing is written.

Interrupted (SIGINT, SIGTERM): the run stops between two steps (within one synchronous step, such
as writing or merging one package), ends its git processes, removes its work directories and
exits 130 or 143; proposals already made are whole. A run that was killed (SIGKILL) leaves its
kdelta-run-* directories in the temporary directory: the next run removes those whose process
is gone.

Update mode: every package of the control repository itself (the git repository --config is in,
its current branch) whose Kptfile has a git upstream is updated the same way — a 3-way merge
from its upstreamLock to the commit its upstream.git.ref names now, keeping every local edit —
one proposal per package on branch kdelta/update-<package path>, pushed to the repository's
origin (or to the repository itself when it has none).

GitHub (--forge github): pull requests on the server of GITHUB_SERVER_URL (default
https://github.com; API at GITHUB_API_URL, GraphQL at GITHUB_GRAPHQL_URL), with the token from
GITHUB_TOKEN, else GH_TOKEN (contents, pull-requests and statuses: write on each downstream; a
GitHub App installation token or a PAT for repositories other than the workflow's own), or as a
GitHub App: KDELTA_GITHUB_APP_ID (or KDELTA_GITHUB_APP_CLIENT_ID) and
KDELTA_GITHUB_APP_PRIVATE_KEY (PEM) mint an installation token per owner. Each downstream's spec.git.repo must be a
repository on that server. The run reads each repository's open pull requests once, and, for a
variant with none open, its branch's closed ones (one request): a pull request a person closed
unmerged is declined (kdelta marks its own closes), and not proposed again from the same upstream
commit and variant (see kdelta proposals --help). A pull request whose plan is unchanged costs no
write. Content-creating requests are counted against
--budget: when it is spent the variants left are reported as deferred (exit code unchanged) and
the next run continues them. Each new head commit gets the commit status "kdelta" (the local
forge records it with the proposal): success, or failure when the proposal has conflicts, its
render failed or a readiness gate of the package is not met (a required injection point without
a source), so a branch protection that requires it holds such a pull request for a reviewer. A
branch holding commits kdelta did not make is never auto-merged: auto-merge that was on is turned
off (the body says so) and its status names the commits.

Render: after the update and the mutations the package's Kptfile pipeline runs (as Porch
renders; images in docker or podman when one answers, else kdelta's built-in functions). When it
fails, the package is still proposed as it stood before the render: the proposal says which
function failed and why, its status is failure, it is a draft under --draft conflicts and never
auto-merged, and the table says "render failed". That is the proposal's state, not a failure of
the run (as conflicts are): it does not change the exit code. The next run renders again.

Flags:
  --config <dir>         the control resources (default .kdelta)
  --report <file.json>   every result as JSON
  --no-render            do not run the package's Kptfile pipeline after the mutations (by
                         default it runs, as Porch renders)
  --no-dashboard         keep no fleet dashboard. By default a run (not a dry run) keeps one: every
                         variant by its state, problems first, with boxes to tick for the next run
                         (retry, allow these removals, re-propose); written only when it changed.
                         Local forge: <proposals-dir>/dashboard.md; github: an issue "kdelta
                         dashboard" in the control repository (needs issues: write)
  --dashboard-repo <r>   the control repository on GitHub, owner/name, for the dashboard (default:
                         the control work tree's origin remote, when it is on the forge's server)

The run's settings (each read by the same rule as the Action's input and RunSettings' field):
${settingFlagsHelp()}

${RUN_SETTINGS_NOTE}

Progress goes to stderr: one line per variant, or on a terminal a status block redrawn in place
(failures stay above it); the table (variant, downstream, action, proposal, conflicts) to
stdout. Exit 0 when every variant succeeded (deferred ones included: stderr says how many), 1
when any failed, the control resources are invalid or the github forge has no token (then
nothing is pushed or written; stderr names file, document and field). A PackageVariantSet that
selects no target is invalid here (\`kdelta variantset expand\` only warns): read as "no variants",
it would propose removing every package the set made, so a selector typo stops the run instead.
`;

/**
 * `kdelta run`'s flags (and a command's own, `extra`: `kdelta preview` runs the same run), their
 * settings checked by the run's rules: a bad one is a usage error naming its flag.
 */
export function readRunFlags(
  args: readonly string[],
  extra: Record<string, FlagSpec> = { report: { type: 'string' } },
): { flags: ParsedFlags; settings: CheckedSettings } {
  const flags = parseFlags(args, {
    config: { type: 'string' },
    'no-render': { type: 'boolean' },
    ...extra,
    ...settingFlagSpecs(),
  });
  if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
  return { flags, settings: settingsFromFlags(flags) };
}

const command: Command = {
  path: ['run'],
  summary: "propose every variant's package to its downstream repository",
  help,
  async run(args, io) {
    const { flags, settings } = readRunFlags(args, {
      report: { type: 'string' },
      'no-dashboard': { type: 'boolean' },
      'dashboard-repo': { type: 'string' },
    });
    const reportFile = stringFlag(flags, 'report');
    const dashboardRepo = stringFlag(flags, 'dashboard-repo');
    const repoProblem = dashboardRepo !== undefined ? dashboardRepositoryProblem(dashboardRepo) : undefined;
    if (repoProblem) throw new UsageError(`--dashboard-repo: ${repoProblem}`);

    // every output path is checked before the first push: a run must not push every branch and then fail on its report
    if (reportFile !== undefined)
      await checkOutputPath({ path: resolve(io.cwd, reportFile), shown: reportFile, what: '--report', kind: 'file' });
    const proposalsDir = settings.values.proposalsDir;
    if (proposalsDir !== undefined && !settings.values.dryRun) {
      await checkOutputPath({ path: resolve(io.cwd, proposalsDir), shown: proposalsDir, what: '--proposals-dir', kind: 'directory' });
    }

    const terminal = io.stderrTerminal;
    const live = terminal ? new LiveProgress({ columns: terminal.columns, startedAt: Date.now() }) : undefined;
    const timer = live ? setInterval(() => io.stderr(live.tick(Date.now())), 1000) : undefined;
    timer?.unref();
    const report = await run({
      cwd: io.cwd,
      config: stringFlag(flags, 'config'),
      render: !booleanFlag(flags, 'no-render'),
      dashboard: booleanFlag(flags, 'no-dashboard') ? false : { repository: dashboardRepo },
      settings,
      env: io.env,
      signal: io.signal,
      onProgress: (e) => {
        const text = live ? live.update(e, Date.now()) : progressLine(e);
        if (text) io.stderr(text);
      },
    }).finally(() => {
      clearInterval(timer);
      if (live) io.stderr(live.finish());
    });
    for (const w of report.warnings) io.stderr(`warning: ${w}\n`);
    // deferred by the write budget (a gate's hold is the fleet's plan, said under the table)
    const deferred = report.results.filter((r) => r.action === 'deferred' && r.heldBy === undefined).length;
    if (deferred > 0) {
      io.stderr(
        `${deferred} variant(s) deferred: the run's budget of ${report.budget?.limit ?? '?'} content-creating API requests is spent; the next run continues them\n`,
      );
    }
    io.stdout(renderTable(report));
    if (reportFile) await writeFileAtomic(resolve(io.cwd, reportFile), reportJson(report));
    return report.failed > 0 ? 1 : 0;
  },
};

export default command;
