import path from 'node:path';
import { stringifyYaml } from '@kdelta/merge-core';
import { applyPackageVariant } from '@kdelta/variant-engine';
import { readPackage, recoverInterruptedSwap, savePackage } from '@kdelta/kptfile-model';
import { type Command, UsageError } from '../command.js';
import { CliInputError } from '../errors.js';
import { booleanFlag, parseFlags, stringFlag } from '../args.js';
import { isDirectory } from '@kdelta/kptfile-model';
import { replacedDirectoryNote } from '../util/replaced-dir.js';
import { decodeObjects, readObjects, readPackageVariant } from './variant-objects.js';

const help = `Usage: kdelta variant apply --variant <pv.yaml> --package <dir> [--objects <path>] [--fail-if-not-ready]

Apply one PackageVariant's mutations (config.porch.kpt.dev/v1alpha1) to the package in <dir>, in
place, in Porch's order:
  1. package context: spec.packageContext.data set and removeKeys deleted in the kptfile.kpt.dev
     ConfigMap of package-context.yaml;
  2. pipeline: spec.pipeline's functions put first in the Kptfile pipeline, named
     PackageVariant.<variant>.<function>.<index> (earlier ones from this variant replaced);
  3. config injection: objects annotated kpt.dev/config-injection filled from --objects by
     spec.injectors; conditions and readiness gates written in the Kptfile.
Then print the resulting conditions as YAML. Applying twice changes nothing.

Flags:
  --variant <file>  the PackageVariant (one PackageVariant document)
  --package <dir>   the package directory (with a Kptfile)
  --objects <path>  a YAML file or a directory of them: the objects available for injection
  --fail-if-not-ready
                    exit 3 when a readiness gate of the package is not met (see below)

Unknown fields in the PackageVariant are errors naming their path; its pipeline functions are
checked as the Kptfile's are (image reference, exec, configPath) before anything is written. Two
--objects documents for the same object are an error naming both.

A required injection point that finds no source does not stop the variant, as in Porch: the
package is written with the readiness gate and a False condition in its Kptfile, the output says
\`ready: false\`, and stderr warns of each unmet gate.

Exit 0 when applied (files changed only if something changed), ready or not; 1 on bad input or a
failed mutation (stderr names the file and the reason; nothing is written); 3 with
--fail-if-not-ready when applied but not ready (the files are written all the same).
`;

/** Applied, but a readiness gate of the package is not met (with --fail-if-not-ready). */
const NOT_READY = 3;

const command: Command = {
  path: ['variant', 'apply'],
  summary: "apply a PackageVariant's mutations to a package directory",
  help,
  async run(args, io) {
    const flags = parseFlags(args, {
      variant: { type: 'string' },
      package: { type: 'string' },
      objects: { type: 'string' },
      'fail-if-not-ready': { type: 'boolean' },
    });
    if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
    const variantFile = stringFlag(flags, 'variant');
    const pkgDir = stringFlag(flags, 'package');
    if (!variantFile) throw new UsageError('--variant <pv.yaml> is required');
    if (!pkgDir) throw new UsageError('--package <dir> is required');
    const objectsPath = stringFlag(flags, 'objects');

    const { pv, doc, where } = await readPackageVariant(variantFile, io.cwd);
    const dir = path.resolve(io.cwd, pkgDir);
    // a write killed half way through its swap may have left the path absent: put it back first
    const recovered = recoverInterruptedSwap(dir);
    if (recovered) io.stderr(`${recovered}\n`);
    if (!(await isDirectory(dir))) throw new UsageError(`--package ${pkgDir}: not a directory`);
    const pkg = await readPackage(dir);
    if (!pkg.kptfile) throw new CliInputError('not-a-package', `${pkgDir}: no Kptfile (not a kpt package)`, { file: pkgDir });
    const objects = decodeObjects(objectsPath ? await readObjects(objectsPath, io.cwd) : []);

    const result = applyPackageVariant(pkg.view, pv, { objects, packageName: path.basename(dir) });
    const name = pv.metadata?.name ?? '';
    if (!result.ok) {
      io.stdout(stringifyYaml({ packageVariant: name, conditions: result.conditions }, { indentSeq: false, lineWidth: 0 }));
      const message = result.errors.join('; ');
      if (result.conditions[0]?.reason === 'ValidationError') {
        throw new CliInputError('invalid-variant', `${where}: ${message}`, { file: doc.file, document: doc.document });
      }
      if (!result.file) throw new CliInputError('variant-not-applied', `${pkgDir}: ${message}`, { file: pkgDir });
      const file = path.join(pkgDir, result.file);
      throw new CliInputError(
        'variant-not-applied',
        message.startsWith(`${result.file}:`) ? `${path.join(pkgDir, message)}` : `${file}: ${message}`,
        { file },
      );
    }
    await savePackage(pkg);
    const note = result.changed.size > 0 ? replacedDirectoryNote(dir, io.cwd) : undefined;
    if (note && io.stderrTerminal) io.stderr(note);
    // a required injection point left without a source gates the package (seed 004): the
    // variant applied and the package exists, but it is not ready to publish
    const unmet = result.unmetGates;
    io.stdout(
      stringifyYaml(
        {
          packageVariant: name,
          conditions: result.conditions,
          package: {
            path: pkgDir,
            changedFiles: [...result.changed.keys()].sort(),
            ready: unmet.length === 0,
            readinessGates: result.readinessGates,
            conditions: result.packageConditions,
          },
        },
        { indentSeq: false, lineWidth: 0 },
      ),
    );
    for (const c of unmet) {
      io.stderr(`kdelta variant apply: warning: not ready: ${pkgDir}: required injection point ${c.type} has no source: ${c.message}\n`);
    }
    return unmet.length > 0 && booleanFlag(flags, 'fail-if-not-ready') ? NOT_READY : 0;
  },
};

export default command;
