import { join, resolve } from 'node:path';
import { type Command, UsageError } from '../command.js';
import { booleanFlag, parseFlags, stringFlag } from '../args.js';
import { createLocalForge, DEFAULT_CONFIG_DIR, parseMetadataBlock } from '@kdelta/run';

const help = `Usage: kdelta proposals [--config <dir>] [--proposals-dir <dir>] [--json]

List the local forge's proposals (the Markdown records \`kdelta run --forge local\` keeps under
<config>/proposals/<downstream>/<variant>.md): state, downstream, variant branch, conflicts, title,
and the upstream ref proposed and why ("latest release v0.4.1 of catalog/bucket").

A proposal whose branch was deleted without being merged is declined: kdelta run does not
propose the same upstream commit with the same variant again (a new upstream commit or a change of
the variant does, and says so). To undo a decline, delete its record: the next run proposes it again.

Flags:
  --config <dir>         the control resources (default .kdelta)
  --proposals-dir <dir>  the records (default <config>/proposals)
  --json                 print them as JSON
`;

const command: Command = {
  path: ['proposals'],
  summary: 'list the proposals of the local forge',
  help,
  async run(args, io) {
    const flags = parseFlags(args, { config: { type: 'string' }, 'proposals-dir': { type: 'string' }, json: { type: 'boolean' } });
    if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
    const config = stringFlag(flags, 'config') ?? DEFAULT_CONFIG_DIR;
    const dir = resolve(io.cwd, stringFlag(flags, 'proposals-dir') ?? join(config, 'proposals'));
    const proposals = await createLocalForge({ dir, displayRoot: io.cwd }).list();
    const rows = proposals.map((p) => {
      const meta = parseMetadataBlock(p.body);
      return {
        state: p.state,
        downstream: p.downstream,
        head: p.head,
        base: p.base,
        conflicts: meta?.conflicts ?? 0,
        // which upstream ref the proposal brings, and why (`latest release v0.4.1 of catalog/bucket`)
        upstream: meta?.upstream ? { ref: meta.upstream.ref, reason: meta.upstream.reason } : undefined,
        title: p.title,
        file: p.url,
      };
    });
    if (booleanFlag(flags, 'json')) {
      io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      io.stdout('no proposals\n');
      return 0;
    }
    const table = [
      ['STATE', 'DOWNSTREAM', 'BRANCH', 'CONFLICTS', 'TITLE', 'UPSTREAM'],
      ...rows.map((r) => [r.state, r.downstream, r.head, String(r.conflicts), r.title, r.upstream?.reason ?? r.upstream?.ref ?? '-']),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
    io.stdout(`${table.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n')}\n`);
    const declined = rows.filter((r) => r.state === 'declined');
    if (declined.length > 0) {
      io.stdout(
        `\n${declined.length} declined: not proposed again from the same upstream commit and variant. To undo a decline, delete its record and run again:\n${declined.map((r) => `  rm ${r.file}`).join('\n')}\n`,
      );
    }
    return 0;
  },
};

export default command;
