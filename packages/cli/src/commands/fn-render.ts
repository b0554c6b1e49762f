import { mkdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { recoverInterruptedSwap } from '@kdelta/kptfile-model';
import { replacedDirectoryNote } from '../util/replaced-dir.js';
import { functionName, renderDirectory, resultLine, resultsYaml, RUNTIMES, type FunctionResult } from '@kdelta/fn-render';
import { settingFlagSpecs, settingsFromFlags } from '../setting-flags.js';
import { booleanFlag, oneOf, parseFlags, stringFlag } from '../args.js';
import { ExitCode, UsageError, type Command } from '../command.js';
import { checkOutputPath, isDirectory, writeFileAtomic } from '@kdelta/kptfile-model';

const help = `Usage: kdelta fn render [<dir>] [--runtime auto|builtin|exec|container] [--results-dir <dir>] [--allow-exec]

Render a kpt package: run the validators and mutators of its Kptfile pipeline, and of its
subpackages' (subpackages first), as \`kpt fn render\` does, and write the resources back to the
files their path and index annotations name.

  <dir>                  the package; default: the current directory.
  --runtime <runtime>    how image functions run:
                           auto (default)  in a container when docker or podman answers, else
                                           with kdelta's built-in implementation
                           builtin         always built-in (set-namespace, set-labels,
                                           set-annotations, apply-setters, search-replace,
                                           set-image, apply-replacements)
                           container       always in a container (no network, read-only)
                           exec            only exec: functions may run
                         exec: functions always run as local executables (relative paths are
                         taken from the current directory, as kpt does), and only with --allow-exec.
  --allow-exec           let exec: functions run: each is any program on this machine, run
                         with your rights. Without it a pipeline with one is refused before any
                         function runs, as kpt does.
  --allow-image <p>      the container images that may run (repeatable, or a comma list), in
                         place of the default, kpt's function catalogues (gcr.io/kpt-fn/ and
                         ghcr.io/kptdev/krm-functions-catalog/). A pattern ending in "/" allows
                         what starts with it; a name (registry.example/team/fn) allows that
                         repository at any tag; a tagged name that tag only; * any image. A
                         pipeline with an image that would run in a container and is not allowed
                         is refused before any function runs (under auto a catalogue function
                         kdelta has built in runs built-in instead)
  --results-dir <dir>    also write the functions' results to <dir>/results.yaml

The container runtime can be named with KDELTA_CONTAINER_RUNTIME. A failing function stops the
render: its results are printed and no file is changed. Exit 0 rendered; 1 failure.
`;

function describeFunction(r: FunctionResult): string {
  return `"${functionName(r)}"${r.runtime === 'builtin' ? ' (built-in)' : ''}`;
}

/** `--allow-image` is kdelta run's setting: read and checked by its row of the settings table. */
const IMAGE_SETTINGS = ['allowedImages'] as const;

const command: Command = {
  path: ['fn', 'render'],
  summary: "run a package's Kptfile function pipeline (kpt fn render)",
  help,
  async run(argv, io) {
    const flags = parseFlags(argv, {
      runtime: { type: 'string' },
      'results-dir': { type: 'string' },
      'allow-exec': { type: 'boolean' },
      ...settingFlagSpecs(IMAGE_SETTINGS),
    });
    if (flags.positionals.length > 1) throw new UsageError(`unexpected argument "${flags.positionals[1]}"`);
    const runtime = oneOf('runtime', stringFlag(flags, 'runtime'), RUNTIMES, 'auto');
    const dir = resolve(io.cwd, flags.positionals[0] ?? '.');
    // a write killed half way through its swap may have left the path absent: put it back first
    const recovered = recoverInterruptedSwap(dir);
    if (recovered) io.stderr(`${recovered}\n`);
    if (!(await isDirectory(dir))) throw new UsageError(`${flags.positionals[0] ?? '.'}: not a directory`);
    const resultsDir = stringFlag(flags, 'results-dir');
    if (resultsDir !== undefined) {
      await checkOutputPath({ path: resolve(io.cwd, resultsDir), shown: resultsDir, what: '--results-dir', kind: 'directory' });
    }

    const { allowedImages } = settingsFromFlags(flags, IMAGE_SETTINGS).values;
    const outcome = await renderDirectory(dir, {
      runtime,
      cwd: io.cwd,
      env: io.env,
      allowExec: booleanFlag(flags, 'allow-exec'),
      ...(allowedImages !== undefined ? { allowedImages } : {}),
    });
    const shown = (pkg: string) => relative(io.cwd, join(dir, pkg)) || '.';
    let current: string | undefined;
    for (const r of outcome.results) {
      if (r.package !== current) {
        current = r.package;
        io.stdout(`${current === outcome.results[0]?.package ? '' : '\n'}Package "${shown(r.package)}":\n`);
      }
      io.stdout(`[${r.exitCode === 0 ? 'PASS' : 'FAIL'}] ${describeFunction(r)} in ${Math.round(r.durationMs)}ms\n`);
      for (const line of r.results) io.stdout(`  ${resultLine(line)}\n`);
      if (r.exitCode !== 0 && r.stderr) io.stdout(`  stderr:\n${r.stderr.trimEnd().replace(/^/gm, '    ')}\n`);
    }
    if (resultsDir !== undefined) {
      const target = resolve(io.cwd, resultsDir);
      await mkdir(target, { recursive: true });
      await writeFileAtomic(join(target, 'results.yaml'), resultsYaml(outcome.results));
      io.stdout(`For complete results, see ${join(resultsDir, 'results.yaml')}\n`);
    }
    if (!outcome.ok) {
      io.stderr(`kdelta fn render: ${outcome.error.message}\nNothing written: the package is as it was.\n`);
      return ExitCode.failure;
    }
    const packages = new Set(outcome.results.map((r) => r.package)).size;
    const changed = outcome.written.length + outcome.deleted.length;
    const note = changed > 0 ? replacedDirectoryNote(dir, io.cwd) : undefined;
    if (note && io.stderrTerminal) io.stderr(note);
    io.stdout(
      `${outcome.results.length > 0 ? '\n' : ''}Successfully executed ${outcome.results.length} function(s) in ${packages} package(s); ${changed} file(s) changed.\n`,
    );
    return ExitCode.ok;
  },
};

export default command;
