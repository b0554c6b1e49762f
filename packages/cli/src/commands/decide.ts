import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { writeFileAtomic } from '@kdelta/kptfile-model';
import { type Command, UsageError } from '../command.js';
import { oneOf, parseFlags, stringFlag, booleanFlag } from '../args.js';
import {
  createLocalForge,
  dashboardBoxes,
  decideBoxes,
  DEFAULT_CONFIG_DIR,
  readFleetDashboard,
  RunError,
  selectDashboardBox,
  selectDecideBox,
  tickLine,
  type DashboardBoxKind,
  type Proposal,
} from '@kdelta/run';
import { DASHBOARD_FLAGS, dashboardOptions } from './dashboard.js';

const help = `Usage: kdelta decide [<proposal> [--take local|upstream <field|box-id>]]
              [--dashboard [retry|allow-removals|repropose [<variant>]]]
              [--config <dir>] [--proposals-dir <dir>] [--mode variants|updates|both] [--shard k/n]

Tick a box of the local forge's Markdown records, as a person would by writing \`- [x]\` for
\`- [ ]\`: the next \`kdelta run\` reads the tick and acts on it, and nothing happens before.
(On GitHub, tick the box on the pull request's or the dashboard issue's page.)

A proposal's Decide boxes settle a conflict: --take local keeps local's value (the field is
pinned with \`# kdelta:local\`), --take upstream takes upstream's. Name the box by its field
(\`spec.replicas\`) or, when several fields share that name, by its id (the first hex digits
are enough). <proposal> is its record (.kdelta/proposals/<downstream>/<variant>.md),
<downstream>/<variant>, or the variant's name when one open proposal has it.

The dashboard's boxes: retry <variant> runs a failed variant first; allow-removals proposes the
removals the removal guard held back; repropose <variant> proposes a declined proposal again.
A variant in several downstreams is named "<variant> <downstream>".

Without a choice, lists the open boxes: of every open proposal and of the dashboard, of one
proposal, or of the dashboard (--dashboard). Exit 1 when the box named is not open, or is not
the only one named.

Flags:
  --take local|upstream   the side a proposal's box takes
  --dashboard             the fleet dashboard's boxes
  --config <dir>          the control resources (default ${DEFAULT_CONFIG_DIR})
  --proposals-dir <dir>   the local forge's records (default <config>/proposals)
  --mode variants|updates|both, --shard k/n
                          the dashboard of a run with this mode and shard (default both, none)
`;

const KINDS = ['retry', 'allow-removals', 'repropose'] as const;

/** The open proposal `name` names: its record, `<downstream>/<variant>`, or a variant only one open proposal has. */
function proposalNamed(open: readonly Proposal[], name: string, cwd: string): Proposal {
  const file = name.endsWith('.md') ? resolve(cwd, name) : undefined;
  const found = open.filter((p) => (file !== undefined ? resolve(cwd, p.url) === file : p.id === name || p.id.endsWith(`/${name}`)));
  if (found.length === 1) return found[0]!;
  const listing = (list: readonly Proposal[]) => list.map((p) => `  ${p.id}  ${p.url}`).join('\n');
  if (found.length === 0)
    throw new RunError(
      'no-such-box',
      `no open proposal is "${name}"${open.length > 0 ? `; the open proposals:\n${listing(open)}` : ' (there is none)'}`,
    );
  throw new RunError(
    'ambiguous-box',
    `${found.length} open proposals are "${name}": name one as <downstream>/<variant>:\n${listing(found)}`,
  );
}

/** A proposal's open boxes, one line each (`<id>  <label>`), under its record's path. */
function proposalListing(p: Proposal, text: string): string[] {
  const boxes = decideBoxes(text);
  const open = boxes.filter((b) => !b.ticked);
  const ticked = boxes.length - open.length;
  if (open.length === 0 && ticked === 0) return [];
  return [
    `${p.url} (${p.head} → ${p.base}):`,
    ...open.map((b) => `  ${b.id}  ${b.label}`),
    ...(ticked > 0 ? [`  (${ticked} ticked: the next run applies ${ticked === 1 ? 'it' : 'them'})`] : []),
  ];
}

function dashboardListing(shown: string, text: string): string[] {
  const open = dashboardBoxes(text).filter((b) => !b.ticked);
  if (open.length === 0) return [];
  const width = Math.max(...open.map((b) => b.kind.length));
  return [`${shown}:`, ...open.map((b) => `  ${b.kind.padEnd(width)}  ${b.label}`)];
}

const command: Command = {
  path: ['decide'],
  summary: 'tick a box of a local proposal or the local dashboard (kdelta run acts on it)',
  help,
  async run(args, io) {
    const flags = parseFlags(args, {
      ...DASHBOARD_FLAGS,
      take: { type: 'string' },
      dashboard: { type: 'boolean' },
    });
    if (stringFlag(flags, 'forge') !== undefined && stringFlag(flags, 'forge') !== 'local')
      throw new UsageError('decides on the local forge only: on GitHub, tick the box on the pull request or the dashboard issue');
    if (stringFlag(flags, 'dashboard-repo') !== undefined)
      throw new UsageError('--dashboard-repo is for GitHub: on GitHub, tick the box on its page');
    const config = stringFlag(flags, 'config') ?? DEFAULT_CONFIG_DIR;
    const dir = resolve(io.cwd, stringFlag(flags, 'proposals-dir') ?? join(config, 'proposals'));
    const shown = (file: string) => relative(io.cwd, file) || file;
    const take = stringFlag(flags, 'take');
    const [first, ...rest] = flags.positionals;

    if (booleanFlag(flags, 'dashboard')) {
      if (take !== undefined) throw new UsageError('--take decides a conflict of a proposal, not a dashboard box');
      if (rest.length > 1) throw new UsageError(`unexpected argument "${rest[1]}"`);
      const { record, file } = await readFleetDashboard(dashboardOptions(flags, io, ['local']));
      if (!record || !file) throw new RunError('no-dashboard', "no dashboard yet among the local forge's records: `kdelta run` writes it");
      if (first === undefined) {
        const lines = dashboardListing(shown(file), record.body);
        io.stdout(lines.length > 0 ? `${lines.join('\n')}\n` : `no open box on ${shown(file)}\n`);
        return 0;
      }
      const kind: DashboardBoxKind = oneOf('dashboard', first, KINDS, 'retry');
      const box = selectDashboardBox(dashboardBoxes(record.body), kind, rest[0]);
      // the file as it is now (not as read above): a run may have rewritten it since
      const text = await readFile(file, 'utf8');
      const now = dashboardBoxes(text).find((b) => b.kind === box.kind && b.subject === box.subject && !b.ticked);
      if (!now) throw new RunError('no-such-box', `${shown(file)} changed meanwhile: run the command again`);
      await writeFileAtomic(file, tickLine(text, now.line));
      io.stdout(`ticked on ${shown(file)}: ${now.label}\nthe next \`kdelta run\` acts on it\n`);
      return 0;
    }

    if (rest.length > 0 && take === undefined)
      throw new UsageError(`unexpected argument "${rest[0]}" (a box is named after --take local|upstream)`);
    const open = (await createLocalForge({ dir, displayRoot: io.cwd }).list()).filter((p) => p.state === 'open');
    if (first === undefined) {
      if (take !== undefined)
        throw new UsageError('--take needs the proposal: kdelta decide <proposal> --take local|upstream <field|box-id>');
      const lines: string[] = [];
      for (const p of open) lines.push(...proposalListing(p, await readFile(resolve(io.cwd, p.url), 'utf8')));
      const { record, file } = await readFleetDashboard(dashboardOptions(flags, io, ['local']));
      if (record && file) lines.push(...dashboardListing(shown(file), record.body));
      io.stdout(lines.length > 0 ? `${lines.join('\n')}\n` : 'no open box\n');
      return 0;
    }
    const proposal = proposalNamed(open, first, io.cwd);
    const file = resolve(io.cwd, proposal.url);
    const text = await readFile(file, 'utf8');
    if (take === undefined) {
      const lines = proposalListing(proposal, text);
      io.stdout(lines.length > 0 ? `${lines.join('\n')}\n` : `no open box on ${proposal.url}\n`);
      return 0;
    }
    const side = oneOf('take', take, ['local', 'upstream'] as const, 'local');
    if (rest.length !== 1)
      throw new UsageError(`--take ${side} needs one field or box id: kdelta decide ${first} --take ${side} <field|box-id>`);
    const box = selectDecideBox(decideBoxes(text), side, rest[0]!);
    await writeFileAtomic(file, tickLine(text, box.line));
    io.stdout(`ticked on ${proposal.url}: ${box.label}\nthe next \`kdelta run\` rebuilds the proposal with it\n`);
    return 0;
  },
};

export default command;
