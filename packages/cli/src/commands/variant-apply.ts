import { promises as fs } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import {
  PACKAGE_VARIANT_API_VERSION,
  applyPackageVariant,
  decodePackageVariant,
  type KubeObject,
} from '@kdelta/variant-engine';
import { readPackage, writePackage } from '@kdelta/kptfile-model';
import { type Command, UsageError } from '../command.js';
import { CliInputError } from '../errors.js';
import { parseFlags, stringFlag } from '../args.js';
import { decodeObjects, describeDocument, readObjects, readYamlDocuments } from './variant-objects.js';

const help = `Usage: kdelta variant apply --variant <pv.yaml> --package <dir> [--objects <path>]

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

Unknown fields in the PackageVariant are errors naming their path; its pipeline functions are
checked as the Kptfile's are (image reference, exec, configPath) before anything is written. Two
--objects documents for the same object are an error naming both.

Exit 0 when applied (files changed only if something changed); 1 on bad input or a failed
mutation (stderr names the file and the reason; nothing is written); 3 when applied but a
required injection point found no source: the files are written (the Kptfile records the False
condition, as Porch does), the output says \`ready: false\`, and stderr names each unmet gate.
`;

/** Applied, but a readiness gate of the package is not met. */
const NOT_READY = 3;

const command: Command = {
  path: ['variant', 'apply'],
  summary: "apply a PackageVariant's mutations to a package directory",
  help,
  async run(args, io) {
    const flags = parseFlags(args, { variant: { type: 'string' }, package: { type: 'string' }, objects: { type: 'string' } });
    if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
    const variantFile = stringFlag(flags, 'variant');
    const pkgDir = stringFlag(flags, 'package');
    if (!variantFile) throw new UsageError('--variant <pv.yaml> is required');
    if (!pkgDir) throw new UsageError('--package <dir> is required');
    const objectsPath = stringFlag(flags, 'objects');

    const docs = (await readYamlDocuments(path.resolve(io.cwd, variantFile), variantFile)).filter(
      (d) => (d.value as KubeObject)?.kind === 'PackageVariant',
    );
    if (docs.length !== 1) {
      throw new CliInputError('invalid-variant', `${variantFile}: expected one PackageVariant document, found ${docs.length}`, { file: variantFile });
    }
    const doc = docs[0]!;
    const where = describeDocument(doc);
    const decoded = decodePackageVariant(doc.value);
    const invalid = [...decoded.errors, ...decoded.unknownFields];
    if (invalid.length > 0) throw new CliInputError('invalid-variant', `${where}: ${invalid.join('; ')}`, { file: doc.file, document: doc.document });
    const pv = decoded.value;
    if (pv.apiVersion !== PACKAGE_VARIANT_API_VERSION) {
      throw new CliInputError('invalid-variant', `${where}: apiVersion: expected ${PACKAGE_VARIANT_API_VERSION}, got ${pv.apiVersion ?? '(none)'}`, {
        file: doc.file,
        document: doc.document,
        path: '.apiVersion',
      });
    }

    const dir = path.resolve(io.cwd, pkgDir);
    const stat = await fs.stat(dir).catch(() => undefined);
    if (!stat?.isDirectory()) throw new UsageError(`--package ${pkgDir}: not a directory`);
    const pkg = await readPackage(dir);
    if (!pkg.kptfile) throw new CliInputError('not-a-package', `${pkgDir}: no Kptfile (not a kpt package)`, { file: pkgDir });
    // The package's own Kptfile and KRM files (subpackages, .krmignore'd and non-KRM files are not
    // the variant's to edit).
    const files = new Map(
      pkg.files.filter((f) => f.kind === 'kptfile' || f.kind === 'krm').map((f) => [f.path, f.content.toString('utf8')] as const),
    );

    const objects = decodeObjects(objectsPath ? await readObjects(objectsPath, io.cwd) : []);

    const result = applyPackageVariant(files, pv, { objects, packageName: path.basename(dir) });
    const name = pv.metadata?.name ?? '';
    if (!result.ok) {
      io.stdout(stringify({ packageVariant: name, conditions: result.conditions }, { indentSeq: false, lineWidth: 0 }));
      const message = result.errors.join('; ');
      if (result.conditions[0]?.reason === 'ValidationError') {
        throw new CliInputError('invalid-variant', `${where}: ${message}`, { file: doc.file, document: doc.document });
      }
      if (!result.file) throw new CliInputError('variant-not-applied', `${pkgDir}: ${message}`, { file: pkgDir });
      const file = path.join(pkgDir, result.file);
      throw new CliInputError('variant-not-applied', message.startsWith(`${result.file}:`) ? `${path.join(pkgDir, message)}` : `${file}: ${message}`, { file });
    }
    await writePackage(dir, [...result.changed].map(([p, content]) => ({ path: p, content })));
    // a required injection point left without a source gates the package (seed 004): the
    // variant applied, but the package is not ready to publish
    const unmet = result.packageConditions.filter((c) => result.readinessGates.includes(c.type) && c.status !== 'True');
    io.stdout(
      stringify(
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
      io.stderr(`kdelta variant apply: not ready: ${pkgDir}: required injection point ${c.type} has no source: ${c.message}\n`);
    }
    return unmet.length === 0 ? 0 : NOT_READY;
  },
};

export default command;
