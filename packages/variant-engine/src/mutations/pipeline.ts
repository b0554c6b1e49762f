import { isMap, isSeq, YAMLMap, YAMLSeq, type Document } from 'yaml';
import type { KptFunction, PackageVariant } from '../api/types.js';
import { type PackageDocuments, VariantMutationError, stringAt } from './package-files.js';

const PREFIX = 'PackageVariant';

/** `PackageVariant.<pv>.<function>.<index>`: the name of a function a variant put in the pipeline. */
export function generatePVFuncName(funcName: string, pvName: string, pos: number): string {
  return `${PREFIX}.${pvName}.${funcName}.${pos}`;
}

/**
 * The `<function>` part of the name of a variant's function: its `name`, else nothing (seed 004:
 * "the function name as specified in the pipeline of the PackageVariant resource (if present)",
 * so an unnamed one is `PackageVariant.web..0`, as Porch writes it). Names taken from the image
 * by earlier versions (`PackageVariant.web.set-labels.0`) have the same 4 parts, so they are still
 * recognised as the variant's and replaced.
 */
export function pipelineFunctionLabel(fn: KptFunction): string {
  return fn.name ?? '';
}

/** Whether a pipeline entry was written by this variant: exactly 4 dot-separated parts, `PackageVariant`, its name, an index. */
export function isPackageVariantFunc(fn: { name?: unknown } | undefined, pvName: string): boolean {
  if (typeof fn?.name !== 'string') return false;
  const parts = fn.name.split('.');
  return parts.length === 4 && parts[0] === PREFIX && parts[1] === pvName && /^[+-]?\d+$/.test(parts[3]!);
}

/** kyaml's order for a generated function: `name`, `image`, then the other fields sorted. */
function orderedFunction(fn: KptFunction, name: string): Record<string, unknown> {
  const out: Record<string, unknown> = { name };
  if (fn.image !== undefined) out.image = fn.image;
  for (const key of Object.keys(fn).sort()) {
    if (key === 'name' || key === 'image' || fn[key] === undefined) continue;
    out[key] = fn[key];
  }
  return out;
}

/**
 * Porch's `ensureKRMFunctions` on a parsed Kptfile: drop this variant's earlier functions, then put
 * `spec.pipeline`'s functions, renamed `PackageVariant.<pv>.<fn>.<index>` (`<fn>` empty when the
 * function has no name), in front of the others,
 * which are kept untouched (comments included). Empty lists, then an empty pipeline, are removed.
 * Applying it twice changes nothing.
 */
export function ensureKRMFunctionsInKptfile(kptfile: Document, pv: PackageVariant): void {
  const pvName = pv.metadata?.name ?? '';
  if (!isMap(kptfile.contents)) throw new VariantMutationError('not-a-krm-object', 'Kptfile: not a KRM object', 'Kptfile');
  let pipeline = kptfile.get('pipeline', true);
  if (pipeline !== undefined && pipeline !== null && !isMap(pipeline)) {
    throw new VariantMutationError('wrong-type', 'Kptfile: pipeline: expected a map', 'Kptfile', '.pipeline');
  }
  for (const list of ['validators', 'mutators'] as const) {
    const existing = isMap(pipeline) ? pipeline.get(list, true) : undefined;
    if (existing !== undefined && existing !== null && !isSeq(existing)) {
      throw new VariantMutationError('wrong-type', `Kptfile: pipeline.${list}: expected a list`, 'Kptfile', `.pipeline.${list}`);
    }
    const kept = (isSeq(existing) ? existing.items : []).filter(
      (item) => !(isMap(item) && isPackageVariantFunc({ name: stringAt(item.get('name', true)) }, pvName)),
    );
    const generated = (pv.spec?.pipeline?.[list] ?? []).map((fn, i) =>
      kptfile.createNode(orderedFunction(fn, generatePVFuncName(pipelineFunctionLabel(fn), pvName, i))),
    );
    const items = [...generated, ...kept];
    if (items.length === 0) {
      if (isMap(pipeline)) pipeline.delete(list);
      continue;
    }
    if (!isMap(pipeline)) {
      pipeline = new YAMLMap();
      kptfile.set('pipeline', pipeline);
    }
    const seq = isSeq(existing) ? existing : new YAMLSeq();
    seq.items = items;
    if (!isSeq(existing)) (pipeline as YAMLMap).set(list, seq);
  }
  if (isMap(pipeline) && pipeline.items.length === 0) kptfile.delete('pipeline');
}

/** `ensureKRMFunctions` over a package: the Kptfile must exist. */
export function ensureKRMFunctions(pkg: PackageDocuments, pv: PackageVariant): void {
  if (!pkg.has('Kptfile')) throw new VariantMutationError('missing-file', 'Kptfile not found in the package', 'Kptfile');
  const [kptfile] = pkg.documents('Kptfile');
  if (!kptfile) throw new VariantMutationError('empty-file', 'Kptfile: empty file', 'Kptfile');
  ensureKRMFunctionsInKptfile(kptfile, pv);
}
