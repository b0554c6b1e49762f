import path from 'node:path';
import { stringify } from 'yaml';
import {
  PACKAGE_VARIANT_SET_API_VERSION,
  decodeObject,
  decodePackageVariantSet,
  expandPackageVariantSet,
  type KubeObject,
} from '@kdelta/variant-engine';
import { type Command, UsageError } from '../command.js';
import { parseFlags, stringFlag } from '../args.js';
import { describeDocument, readObjects, readYamlDocuments } from './variant-objects.js';

const help = `Usage: kdelta variantset expand --set <pvs.yaml> [--objects <path>]

Print the PackageVariant resources a PackageVariantSet (config.porch.kpt.dev/v1alpha2) generates,
as Porch's controller would: targets unrolled in order, CEL templates evaluated, each variant
named <set>-<repo>-<package> (shortened with a hash past 63 characters).

Flags:
  --set <file>      the PackageVariantSet(s) to expand (every PackageVariantSet document in the file)
  --objects <path>  a YAML file or a directory of them: the Repository objects
                    (config.porch.kpt.dev/v1alpha1), the objects an objectSelector selects, and
                    optionally the upstream PackageRevision (metadata for CEL's \`upstream\`)

Exit 0 with the variants on stdout as a YAML stream; 1 on bad input (stderr names the file,
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
    if (sets.length === 0) throw new Error(`${setFile}: no PackageVariantSet document found`);
    const objectDocs = objectsPath ? await readObjects(objectsPath, io.cwd) : [];
    const objects: KubeObject[] = [];
    for (const o of objectDocs) {
      const d = decodeObject(o.value);
      if (d.errors.length > 0) throw new Error(`${describeDocument(o)}: ${d.errors.join('; ')}`);
      objects.push(d.value);
    }

    const out: string[] = [];
    for (const doc of sets) {
      const where = describeDocument(doc);
      const decoded = decodePackageVariantSet(doc.value);
      if (decoded.errors.length > 0) throw new Error(`${where}: ${decoded.errors.join('; ')}`);
      const pvs = decoded.value;
      if (pvs.apiVersion !== PACKAGE_VARIANT_SET_API_VERSION) {
        throw new Error(
          `${where}: apiVersion: expected ${PACKAGE_VARIANT_SET_API_VERSION}, got ${pvs.apiVersion ?? '(none)'} ` +
            '(only the v1alpha2 API, with templates and CEL, is supported)',
        );
      }
      const result = expandPackageVariantSet(pvs, { objects });
      if (!result.ok) throw new Error(`${where}: ${result.reason}: ${result.errors.join('; ')}`);
      for (const pv of result.variants) out.push(stringify(pv, { indentSeq: false, lineWidth: 0 }));
    }
    io.stdout(out.map((text) => `---\n${text}`).join(''));
    return 0;
  },
};

export default command;
