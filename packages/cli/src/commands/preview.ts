import { type Command, UsageError } from '../command.js';
import { booleanFlag, stringFlag } from '../args.js';
import { preview, renderPreview, type PreviewFormat } from '@kdelta/run';
import { progressLine } from '../run-progress.js';
import { readRunFlags } from './run.js';

const FORMATS: readonly PreviewFormat[] = ['text', 'markdown', 'json'];

const help = `Usage: kdelta preview [--upstream <Repository>] [--upstream-ref <ref>] [--config <dir>]
               [--format text|markdown|json] [--json] [--no-render] [--allow-exec]
               [--forge local|github] [--concurrency n] [--shard k/n] [--mode variants|updates|both]

What a change would do to every downstream, before it is released or merged: for each variant it
affects, the proposal kdelta run would make against the downstream's current base branch (with its
local edits) — the files and resources that change, the conflicts (field, origin, upstream and
local values, the rule), a render that fails, variants created or removed, and those unchanged.
It is kdelta run's own dry run: nothing is written — no push, no proposal, no record; the
downstreams are only read (one clone each) and each upstream tree is fetched once.

The change is either:
  --upstream-ref <ref>   a ref of an upstream repository that is not a release yet: a pull
                         request's head (refs/pull/7/head on GitHub), a branch, a tag or a full
                         commit. The variants whose upstream is that Repository are computed at
                         the ref's commit; the others are not looked at
  (no --upstream-ref)    the control resources of the work tree as they are (changed revisions,
                         selectors, templates, new or deleted variants): every variant, package
                         update and removal, as kdelta run would propose them now

Flags:
  --upstream <name>      the upstream Repository (metadata.name, or <namespace>/<name>) the ref is
                         of; needed only when the variants have more than one upstream
  --upstream-ref <ref>   see above
  --config <dir>         the control resources (default .kdelta)
  --format <format>      text (default: the aggregates, then a table of the affected variants and
                         their conflicts), markdown (one collapsed section per affected variant,
                         the proposals' conflict table: for a pull request comment) or json
  --json                 the same as --format json: every variant's impact, files, resources,
                         conflicts and render failure as data
  --no-render            do not run the packages' Kptfile pipelines (by default they run, as in a run)
  --allow-exec           let the pipelines' exec: functions run (see kdelta run --help)
  --allow-image <p>      the container images the pipelines may run (see kdelta run --help). With
                         --upstream-ref the package content is the reviewed change, anyone's pull
                         request: no image runs unless given here (kpt's catalogue functions that
                         kdelta has built in still render, built-in); exec: functions run only
                         with --allow-exec. Without --upstream-ref the default is kdelta run's:
                         kpt's function catalogues
  --forge <forge>        where the open proposals are read from: local (default) or github (the
                         GitHub token needs read access to the downstreams only)
  The other settings of kdelta run (--concurrency, --shard, --mode, --branch-prefix,
  --allow-local-upstreams, --credential-repository...) are read by the same rules.

Output: the aggregates first ("conflicts in 2 of 40 downstreams; the most common fields:
.spec.replicas (2); render fails in 1 (function ...); 1 new variant; 1 removal; 36 unchanged"),
then the details. Progress goes to stderr. Exit 0 when every variant was computed (conflicts and
render failures are what a preview reports, not errors), 1 when one could not be, the control
resources are invalid, or the Repository or the ref does not exist.
`;

const command: Command = {
  path: ['preview'],
  summary: 'show what a change (an upstream ref, or the control work tree) would propose to every downstream; writes nothing',
  help,
  async run(args, io) {
    const { flags, settings } = readRunFlags(args, {
      upstream: { type: 'string' },
      'upstream-ref': { type: 'string' },
      format: { type: 'string' },
      json: { type: 'boolean' },
    });
    const format = booleanFlag(flags, 'json') ? 'json' : (stringFlag(flags, 'format') ?? 'text');
    if (!FORMATS.includes(format as PreviewFormat)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')} (got "${format}")`);
    const upstream = stringFlag(flags, 'upstream');
    const upstreamRef = stringFlag(flags, 'upstream-ref');
    if (upstream !== undefined && upstreamRef === undefined)
      throw new UsageError('--upstream names the Repository of --upstream-ref: give the ref to preview');
    if (settings.values.dryRun !== undefined) throw new UsageError('--dry-run: a preview never writes; leave the flag out');
    const report = await preview({
      cwd: io.cwd,
      config: stringFlag(flags, 'config'),
      render: !booleanFlag(flags, 'no-render'),
      settings,
      upstream,
      upstreamRef,
      env: io.env,
      signal: io.signal,
      onProgress: (e) => {
        const text = progressLine(e);
        if (text) io.stderr(text);
      },
    });
    io.stdout(renderPreview(report, { format: format as PreviewFormat }));
    return report.summary.failed > 0 ? 1 : 0;
  },
};

export default command;
