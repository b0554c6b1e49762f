import path from 'node:path';
import { stringifyYaml } from '@kdelta/merge-core';
import { PACKAGE_VARIANT_SET_API_VERSION, checkPackageVariantSet, expandPackageVariantSet, type KubeObject } from '@kdelta/variant-engine';
import { type Command, UsageError } from '../command.js';
import { CliInputError } from '../errors.js';
import { parseFlags, stringFlag } from '../args.js';
import { decodeObjects, describeDocument, readObjects, readYamlDocuments } from './variant-objects.js';

const help = `Usage: kdelta variantset expand --set <pvs.yaml> [--objects <path>]

Print the PackageVariant resources a PackageVariantSet (config.porch.kpt.dev/v1alpha2) generates,
as Porch's controller would: targets unrolled in order, CEL templates evaluated, each variant
named <set>-<repo>-<package> (shortened with a hash past 63 characters).

Flags:
  --set <file>      the PackageVariantSet(s) to expand (every PackageVariantSet document in the file)
  --objects <path>  a YAML file or a directory of them: the Repository objects
                    (config.porch.kpt.dev/v1alpha1), the objects an objectSelector selects, and
                    optionally the upstream PackageRevision (metadata for CEL's \`upstream\`)

Unknown fields are errors naming their path. \`packageNames\` beside a \`repositorySelector\` or
\`objectSelector\` instantiates each listed package in every selected repository. A \`repositories\`
target naming a Repository that is not among --objects is an error for that target.

Exit 0 with the variants on stdout as a YAML stream (a selector target that selects nothing, or
a set that generates no variant, is a warning on stderr); 1 on bad input (stderr names the file,
the document and the field path).
`;

const command: Command = {
  path: ['variantset', 'expand'],
  summary: 'print the PackageVariants a PackageVariantSet generates',
  help,
  async run(args, io) {
    const flags = parseFlags(args, { set: { type: 'string' }, objects: { type: 'string' } });
    if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
    const setFile = stringFlag(flags, 'set');
    if (!setFile) throw new UsageError('--set <pvs.yaml> is required');
    const objectsPath = stringFlag(flags, 'objects');

    const docs = await readYamlDocuments(path.resolve(io.cwd, setFile), setFile);
    const sets = docs.filter((d) => (d.value as KubeObject)?.kind === 'PackageVariantSet');
    if (sets.length === 0) throw new CliInputError('invalid-variant', `${setFile}: no PackageVariantSet document found`, { file: setFile });
    const objects = decodeObjects(objectsPath ? await readObjects(objectsPath, io.cwd) : []);

    const out: string[] = [];
    const warnings: string[] = [];
    for (const doc of sets) {
      const where = describeDocument(doc);
      const checked = checkPackageVariantSet(doc.value);
      if (checked.problems.length > 0)
        throw new CliInputError('invalid-variant', `${where}: ${checked.problems.join('; ')}`, { file: doc.file, document: doc.document });
      const pvs = checked.value;
      if (pvs.apiVersion !== PACKAGE_VARIANT_SET_API_VERSION) {
        throw new CliInputError(
          'invalid-variant',
          `${where}: apiVersion: expected ${PACKAGE_VARIANT_SET_API_VERSION}, got ${pvs.apiVersion ?? '(none)'} ` +
            '(only the v1alpha2 API, with templates and CEL, is supported)',
          { file: doc.file, document: doc.document, path: '.apiVersion' },
        );
      }
      const result = expandPackageVariantSet(pvs, { objects });
      if (!result.ok)
        throw new CliInputError('invalid-variant', `${where}: ${result.reason}: ${result.errors.join('; ')}`, {
          file: doc.file,
          document: doc.document,
        });
      for (const w of result.warnings) warnings.push(`${where}: ${w}`);
      if (result.variants.length === 0) warnings.push(`${where}: selects no target: no PackageVariant generated`);
      for (const pv of result.variants) out.push(stringifyYaml(pv, { indentSeq: false, lineWidth: 0 }));
    }
    for (const w of warnings) io.stderr(`kdelta variantset expand: warning: ${w}\n`);
    io.stdout(out.map((text) => `---\n${text}`).join(''));
    return 0;
  },
};

export default command;
