import { join, resolve } from 'node:path';
import { layerSchemas, schemaRegistryFromText, withFinalLineBreak, type ConflictStrategy, type SchemaRegistry } from '@kdelta/merge-core';
import { boolWord, oneOf, parseFlags, stringFlag, stringsFlag } from '../args.js';
import { ExitCode, UsageError, type Command, type Io } from '../command.js';
import { conflictLine, conflictReport } from '../conflicts.js';
import { checkOutputPath, readText, writeFileAtomic } from '@kdelta/kptfile-model';
import { rm } from 'node:fs/promises';
import { mergePackages, readMergeSide, type MergeSide } from '@kdelta/kptfile-model';

const help = `kdelta merge3 — 3-way merge of Kubernetes resources, as kpt pkg update merges them

Usage: kdelta merge3 --original <path> --updated <path> --local <path> [--output <dir>] [--single]
              [--schema <file>]... [--infer-keys=true|false]
              [--on-conflict upstream-wins|local-wins|fail] [--report <file.json>]

  <path> is a file with one or more YAML documents, or a directory (every *.yaml, *.yml and
  Kptfile below it). Resources are matched by group, kind, namespace and name, or by their
  "# kpt-merge: <namespace>/<name>" comment.

  A "# kdelta:local" comment on a field's line in the local version pins the field: it keeps
  local's value (and everything under it), whatever upstream does, in resources and Kptfiles
  alike. A pin is reported as a decision, never as a conflict.

Flags:
  --original <path>       the version local was fetched from (origin)
  --updated <path>        the new upstream version
  --local <path>          the local, customised version
  --output <dir>          write the merged files there, in local's layout (default: stdout)
  --single                each file holds one YAML value (not resources); merge them as one value
  --schema <file>         an OpenAPI document or CRD file teaching list and map types (repeatable)
  --infer-keys=true|false make lists associative by kpt's fallback keys where no schema speaks
                          (default true)
  --on-conflict <mode>    upstream-wins (default, kpt's behaviour), local-wins, or fail
  --report <file.json>    write what happened to each resource, every conflict and every pin
                          that kept local's value
  -h, --help              show this help

Exit codes: 0 merged; 1 bad input or failure (nothing written); 3 conflicts with --on-conflict fail.
`;

/** One side, read by kptfile-model; a path that cannot be read is a usage error naming the flag. */
function readSide(path: string, cwd: string, flag: string): MergeSide {
  try {
    return readMergeSide(resolve(cwd, path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--${flag} ${path}: ${code === 'ENOENT' ? 'no such file or directory' : (error as Error).message}`);
  }
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`--${flag} is required`);
  return value;
}

async function run(args: readonly string[], io: Io): Promise<number> {
  const flags = parseFlags(args, {
    original: { type: 'string' },
    updated: { type: 'string' },
    local: { type: 'string' },
    output: { type: 'string' },
    single: { type: 'boolean' },
    schema: { type: 'string', multiple: true },
    'infer-keys': { type: 'string' },
    'on-conflict': { type: 'string' },
    report: { type: 'string' },
  });
  if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
  const strategy = oneOf<ConflictStrategy>(
    'on-conflict',
    stringFlag(flags, 'on-conflict'),
    ['upstream-wins', 'local-wins', 'fail'],
    'upstream-wins',
  );
  const inferKeys = boolWord('infer-keys', stringFlag(flags, 'infer-keys'), true);
  const originPath = required(stringFlag(flags, 'original'), 'original');
  const updatedPath = required(stringFlag(flags, 'updated'), 'updated');
  const localPath = required(stringFlag(flags, 'local'), 'local');
  const output = stringFlag(flags, 'output');
  const reportPath = stringFlag(flags, 'report');
  if (output !== undefined) await checkOutputPath({ path: resolve(io.cwd, output), shown: output, what: '--output', kind: 'directory' });
  if (reportPath !== undefined)
    await checkOutputPath({ path: resolve(io.cwd, reportPath), shown: reportPath, what: '--report', kind: 'file' });

  let schemas: SchemaRegistry | undefined;
  for (const file of stringsFlag(flags, 'schema')) {
    const text = await readText(resolve(io.cwd, file)).catch(() => {
      throw new UsageError(`--schema ${file}: no such file`);
    });
    schemas = layerSchemas(schemas, schemaRegistryFromText(text, file));
  }

  const sides = {
    origin: readSide(originPath, io.cwd, 'original'),
    upstream: readSide(updatedPath, io.cwd, 'updated'),
    local: readSide(localPath, io.cwd, 'local'),
  };
  const single = flags.values.single === true;
  if (single && (sides.origin.directory || sides.upstream.directory || sides.local.directory))
    throw new UsageError('--single takes three files, not directories');
  const { files, deleted, conflicts, decisions, report } = mergePackages(sides, { strategy, inferKeys, schemas, single });

  if (strategy === 'fail' && conflicts.length > 0) {
    // The failure is the first line; the conflicts follow, without a winner (nothing was merged).
    const n = conflicts.length;
    io.stderr(
      `kdelta merge3: ${n} conflict${n === 1 ? '' : 's'} between local and upstream changes; nothing written (--on-conflict fail):\n`,
    );
    for (const c of conflicts) io.stderr(`  ${conflictLine(c, { verdict: false })}\n`);
    if (reportPath) await writeFileAtomic(resolve(io.cwd, reportPath), `${JSON.stringify({ ...report, conflicts, decisions }, null, 2)}\n`);
    return ExitCode.conflicts;
  }

  io.stderr(conflictReport(conflicts, (c) => conflictLine(c, { verdict: true })));
  for (const d of decisions) io.stderr(`${d.resource}: ${d.message}\n`);
  if (output) {
    const dir = resolve(io.cwd, output);
    for (const f of files) await writeFileAtomic(join(dir, f.path), f.text);
    for (const path of deleted) await rm(join(dir, path), { force: true });
  } else {
    io.stdout(joinStream(files.map((f) => f.text)));
  }
  if (reportPath) await writeFileAtomic(resolve(io.cwd, reportPath), `${JSON.stringify({ ...report, conflicts, decisions }, null, 2)}\n`);
  return ExitCode.ok;
}

function joinStream(texts: readonly string[]): string {
  return texts
    .filter((t) => t.trim() !== '')
    .map((t, i) => (i > 0 && !t.startsWith('---') ? `---\n${t}` : t))
    .map(withFinalLineBreak)
    .join('');
}

const merge3: Command = { path: ['merge3'], summary: '3-way merge of KRM resources (kpt pkg update semantics)', help, run };
export default merge3;
