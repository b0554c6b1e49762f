import { isMap, isSeq, type Document, type YAMLMap } from 'yaml';
import type { Condition, InjectionSelector, KubeObject, PackageVariant } from '../api/types.js';
import { namespaceOf } from '../template/targets.js';
import { type PackageDocuments, VariantMutationError, annotationsOf, stringAt } from './package-files.js';

export const CONFIG_INJECTION_ANNOTATION = 'kpt.dev/config-injection';
/** What Porch writes on an injected resource. */
export const INJECTED_RESOURCE_ANNOTATION = 'kpt.dev/injected-resource';
/** What the design (seed 004) names it; kdelta writes both. */
export const INJECTED_RESOURCE_NAME_ANNOTATION = 'kpt.dev/injected-resource-name';

export interface InjectionPoint {
  readonly file: string;
  readonly conditionType: string;
  readonly required: boolean;
  readonly errors: string[];
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  injected: boolean;
  injectedName?: string;
  /** The in-package object (absent when points are built by hand). */
  readonly doc?: Document | undefined;
}

/** `apiVersion` → group and version (`v1` is the core group, `""`). */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** Porch's `parseFiles` + `findInjectionPoints`: every object annotated `kpt.dev/config-injection`. */
export function findInjectionPoints(pkg: PackageDocuments): InjectionPoint[] {
  const points: InjectionPoint[] = [];
  // only the files whose objects carry the annotation are parsed for editing (a big ConfigMap is not)
  for (const { file, doc } of pkg.objects(pkg.filesAnnotated(CONFIG_INJECTION_ANNOTATION))) {
    const value = stringAt(annotationsOf(doc, false)?.get(CONFIG_INJECTION_ANNOTATION, true));
    if (value === undefined) continue;
    const kind = stringAt(doc.get('kind', true)) ?? '';
    const name = stringAt(doc.getIn(['metadata', 'name'], true)) ?? '';
    const point: InjectionPoint = {
      file,
      conditionType: `config.injection.${kind}.${name}`,
      required: value === 'required',
      errors: [],
      apiVersion: stringAt(doc.get('apiVersion', true)) ?? '',
      kind,
      name,
      injected: false,
      doc,
    };
    if (value !== 'required' && value !== 'optional') {
      point.errors.push(`${file}: ${kind}/${name} has invalid "${CONFIG_INJECTION_ANNOTATION}" annotation value of "${value}"`);
    }
    points.push(point);
  }
  return points;
}

/** Porch's `validateInjectionPoints`: the points' own errors and duplicate condition types. */
export function validateInjectionPoints(points: readonly Pick<InjectionPoint, 'file' | 'conditionType' | 'errors'>[]): string | undefined {
  const errors: string[] = [];
  const holder = new Map<string, string>();
  for (const p of points) {
    errors.push(...(p.errors ?? []));
    const previous = holder.get(p.conditionType);
    if (previous !== undefined) {
      errors.push(`duplicate injection conditionType "${p.conditionType}" (${previous} and ${p.file})`);
    }
    holder.set(p.conditionType, p.file);
  }
  return errors.length > 0 ? `errors in injection points: ${errors.join(', ')}` : undefined;
}

function injectorMatches(injector: InjectionSelector, point: Pick<InjectionPoint, 'apiVersion' | 'kind'>): boolean {
  const { group, version } = splitApiVersion(point.apiVersion);
  if (injector.group !== undefined && injector.group !== group) return false;
  if (injector.version !== undefined && injector.version !== version) return false;
  if (injector.kind !== undefined && injector.kind !== point.kind) return false;
  return true;
}

/**
 * What the config injection of `pv` reads of `objects`, as data: the objects an injector may take
 * (named by an injector, of a group, version and kind it accepts, in the variant's namespace) and
 * the kinds present in that namespace (a point whose kind has no object at all says so on the
 * Kptfile). Equal inputs inject the same, whatever else `objects` holds: what a run's fingerprint
 * of the variant covers. A variant without injectors reads nothing.
 */
export function injectionInputs(pv: PackageVariant, objects: readonly KubeObject[]): { objects: KubeObject[]; kinds: string[] } {
  const injectors = pv.spec?.injectors ?? [];
  if (injectors.length === 0) return { objects: [], kinds: [] };
  const ns = namespaceOf(pv);
  const inNamespace = objects.filter((o) => namespaceOf(o) === ns);
  const taken = inNamespace.filter((o) =>
    injectors.some((i) => i.name === o.metadata?.name && injectorMatches(i, { apiVersion: o.apiVersion ?? '', kind: o.kind ?? '' })),
  );
  const kinds = [...new Set(inNamespace.map((o) => `${o.apiVersion ?? ''} ${o.kind ?? ''}`))].sort(byteOrder);
  return { objects: taken, kinds };
}

/**
 * Inject one point from the objects available to the variant: the first injector (in order) that
 * matches the in-package object's GVK and names an object of the same apiVersion and kind in the
 * variant's namespace wins. ConfigMaps (core group) get `data` copied, everything else `spec`.
 * Failures are recorded on the point, never thrown.
 */
function injectPoint(point: InjectionPoint, pv: PackageVariant, objects: readonly KubeObject[]): void {
  const injectors = pv.spec?.injectors ?? [];
  if (injectors.length === 0) {
    point.errors.push('no injectors defined');
    return;
  }
  const ns = namespaceOf(pv);
  const candidates = objects.filter((o) => o.apiVersion === point.apiVersion && o.kind === point.kind && namespaceOf(o) === ns);
  if (candidates.length === 0) {
    point.errors.push(`no in-cluster resources of type ${point.apiVersion}.${point.kind}`);
    return;
  }
  let source: KubeObject | undefined;
  for (const injector of injectors) {
    if (!injectorMatches(injector, point)) continue;
    const named = candidates.filter((o) => o.metadata?.name === injector.name);
    if (named.length > 1) {
      // the same object given twice: neither can be preferred without guessing
      throw new VariantMutationError(
        'ambiguous-injection',
        `${point.file}: ${point.kind}/${point.name}: ${named.length} in-cluster resources ${point.apiVersion} ${point.kind} "${injector.name}" match equally`,
        point.file,
      );
    }
    source = named[0];
    if (source) break;
  }
  if (!source || !point.doc) return;
  const sourceName = source.metadata?.name ?? '';
  const field = point.kind === 'ConfigMap' && splitApiVersion(point.apiVersion).group === '' ? 'data' : 'spec';
  if (source[field] === undefined || source[field] === null) {
    point.errors.push(`field "${field}" not found in resource "${sourceName}"`);
    return;
  }
  point.doc.set(field, point.doc.createNode(source[field]));
  const annotations = annotationsOf(point.doc, true)!;
  annotations.set(INJECTED_RESOURCE_ANNOTATION, sourceName);
  annotations.set(INJECTED_RESOURCE_NAME_ANNOTATION, sourceName);
  point.injected = true;
  point.injectedName = sourceName;
}

/** The condition an injection point gets on the Kptfile. */
export function injectionCondition(point: Pick<InjectionPoint, 'conditionType' | 'injected' | 'injectedName' | 'errors'>): Condition {
  if (point.injected) {
    return {
      type: point.conditionType,
      status: 'True',
      reason: 'ConfigInjected',
      message: `injected resource "${point.injectedName ?? ''}" from cluster`,
    };
  }
  const errors = point.errors ?? [];
  return {
    type: point.conditionType,
    status: 'False',
    reason: 'NoResourceSelected',
    message: errors.length > 0 ? errors.join(', ') : 'no resource matched any injection selector for this injection point',
  };
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Porch's `setInjectionPointConditionsAndGates` on a parsed Kptfile: `info.readinessGates` becomes the
 * sorted union of the existing gates and the required points (written only when not empty); each
 * point upserts its condition in `status.conditions`, all sorted by type; the rest is kept.
 */
export function setInjectionPointConditionsAndGates(
  kptfile: Document,
  points: readonly Pick<InjectionPoint, 'conditionType' | 'required' | 'injected' | 'injectedName' | 'errors'>[],
): void {
  if (points.length === 0) return;
  const existingGates = kptfile.getIn(['info', 'readinessGates']);
  const gates = new Set<string>();
  if (isSeq(existingGates)) {
    for (const g of existingGates.items) if (isMap(g)) gates.add(stringAt(g.get('conditionType', true)) ?? '');
  }
  for (const p of points) if (p.required) gates.add(p.conditionType);
  if (gates.size > 0) {
    const sorted = [...gates].sort(byteOrder);
    const unchanged =
      isSeq(existingGates) &&
      existingGates.items.length === sorted.length &&
      existingGates.items.every((g, i) => isMap(g) && stringAt(g.get('conditionType', true)) === sorted[i]);
    if (!unchanged) kptfile.setIn(['info', 'readinessGates'], kptfile.createNode(sorted.map((conditionType) => ({ conditionType }))));
  }
  const existing = kptfile.getIn(['status', 'conditions']);
  const byType = new Map<string, unknown>();
  if (isSeq(existing)) {
    for (const c of existing.items) if (isMap(c)) byType.set(stringAt(c.get('type', true)) ?? '', c);
  }
  for (const p of points) {
    const c = injectionCondition(p);
    // Key order as kpt writes conditions: type, status, message, reason.
    byType.set(c.type, kptfile.createNode({ type: c.type, status: c.status, message: c.message, reason: c.reason }));
  }
  const items = [...byType.keys()].sort(byteOrder).map((k) => byType.get(k));
  if (isSeq(existing)) existing.items = items as YAMLMap[];
  else kptfile.setIn(['status', 'conditions'], kptfile.createNode(items));
}

export interface InjectionResult {
  readonly points: InjectionPoint[];
}

/**
 * Porch's `ensureConfigInjection`: find and validate the injection points (invalid annotation values
 * and ambiguous condition types are errors), inject each point, write conditions and readiness gates.
 */
export function ensureConfigInjection(pkg: PackageDocuments, pv: PackageVariant, objects: readonly KubeObject[]): InjectionResult {
  const points = findInjectionPoints(pkg);
  const invalid = validateInjectionPoints(points);
  if (invalid) throw new VariantMutationError('invalid-injection-point', invalid);
  for (const point of points) injectPoint(point, pv, objects);
  if (points.length > 0) {
    if (!pkg.has('Kptfile')) throw new VariantMutationError('missing-file', 'Kptfile not found in the package', 'Kptfile');
    const [kptfile] = pkg.documents('Kptfile');
    if (!kptfile) throw new VariantMutationError('empty-file', 'Kptfile: empty file', 'Kptfile');
    setInjectionPointConditionsAndGates(kptfile, points);
  }
  return { points };
}
