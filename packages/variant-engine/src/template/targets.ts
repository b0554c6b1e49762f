import {
  REPOSITORY_API_VERSION,
  type KubeObject,
  type LabelSelector,
  type PackageVariantSet,
  type PackageVariantTemplate,
  type StringMap,
} from '../api/types.js';
import type { CelResult } from './cel.js';

/** One unrolled target of a PackageVariantSet: the defaults, the template and the selected object. */
export interface DownstreamTarget {
  readonly repoDefault: string;
  readonly packageDefault: string;
  readonly template?: PackageVariantTemplate | undefined;
  /** The selected object (selector targets); absent for `repositories` targets. */
  readonly object?: KubeObject | undefined;
  /** Index of the target in `spec.targets`, for error messages. */
  readonly targetIndex: number;
  /** Index in the target's `repositories` (`repositories` targets only). */
  readonly repositoryIndex?: number | undefined;
}

/** Objects without a namespace live in `default`, as `kubectl apply` would put them. */
export function namespaceOf(obj: { metadata?: { namespace?: string } | undefined }): string {
  return obj.metadata?.namespace || 'default';
}

/** Kubernetes label selector semantics; an empty selector matches everything. */
export function matchesLabelSelector(selector: LabelSelector, labels: StringMap | undefined): CelResult<boolean> {
  const have = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (have[k] !== v) return { ok: true, value: false };
  }
  for (const [i, req] of (selector.matchExpressions ?? []).entries()) {
    const present = Object.hasOwn(have, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!present || !values.includes(have[req.key]!)) return { ok: true, value: false };
        break;
      case 'NotIn':
        if (present && values.includes(have[req.key]!)) return { ok: true, value: false };
        break;
      case 'Exists':
        if (!present) return { ok: true, value: false };
        break;
      case 'DoesNotExist':
        if (present) return { ok: true, value: false };
        break;
      default:
        return {
          ok: false,
          error: `matchExpressions[${i}].operator: "${req.operator}" is not one of In, NotIn, Exists, DoesNotExist`,
        };
    }
  }
  return { ok: true, value: true };
}

/** `apiVersion` and `kind` equal, with `v1` and `/v1` both naming the core group. */
function sameType(obj: KubeObject, apiVersion: string, kind: string): boolean {
  const norm = (v: string | undefined) => (v ?? '').replace(/^\//, '');
  return obj.kind === kind && norm(obj.apiVersion) === norm(apiVersion);
}

/** Objects of one type in one namespace matching a selector, ordered by name as the API lists them. */
export function selectObjects(
  objects: readonly KubeObject[],
  query: { apiVersion: string; kind: string; namespace: string; selector: LabelSelector; name?: string | undefined },
): CelResult<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const obj of objects) {
    if (!sameType(obj, query.apiVersion, query.kind) || namespaceOf(obj) !== query.namespace) continue;
    if (query.name !== undefined && obj.metadata?.name !== query.name) continue;
    const m = matchesLabelSelector(query.selector, obj.metadata?.labels);
    if (!m.ok) return m;
    if (m.value) out.push(obj);
  }
  out.sort((a, b) =>
    (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : (a.metadata?.name ?? '') > (b.metadata?.name ?? '') ? 1 : 0,
  );
  return { ok: true, value: out };
}

/**
 * Porch's `unrollDownstreamTargets`: targets in order; a `repositories` target gives one entry per
 * (repository, package name), the upstream package when no names are listed; a selector target gives
 * one entry per selected object and listed package name (repoDefault = object name, packageDefault =
 * the name, the upstream package when none are listed).
 * An empty selection is not an error.
 */
export function unrollTargets(pvs: PackageVariantSet, objects: readonly KubeObject[]): CelResult<DownstreamTarget[]> {
  const upstreamPackage = pvs.spec?.upstream?.package ?? '';
  const namespace = namespaceOf(pvs);
  const out: DownstreamTarget[] = [];
  for (const [targetIndex, target] of (pvs.spec?.targets ?? []).entries()) {
    const template = target.template;
    if (target.repositories) {
      for (const [repositoryIndex, repo] of target.repositories.entries()) {
        const names = repo.packageNames && repo.packageNames.length > 0 ? repo.packageNames : [upstreamPackage];
        for (const name of names) {
          out.push({ repoDefault: repo.name ?? '', packageDefault: name, template, targetIndex, repositoryIndex });
        }
      }
      continue;
    }
    const selector = target.repositorySelector ?? target.objectSelector;
    if (!selector) continue;
    const isRepo = target.repositorySelector !== undefined;
    const field = isRepo ? 'repositorySelector' : 'objectSelector';
    const selected = selectObjects(objects, {
      apiVersion: isRepo ? REPOSITORY_API_VERSION : (target.objectSelector?.apiVersion ?? ''),
      kind: isRepo ? 'Repository' : (target.objectSelector?.kind ?? ''),
      namespace,
      selector,
      name: isRepo ? undefined : target.objectSelector?.name,
    });
    if (!selected.ok) return { ok: false, error: `spec.targets[${targetIndex}].${field}.${selected.error}` };
    const names = target.packageNames && target.packageNames.length > 0 ? target.packageNames : [upstreamPackage];
    for (const object of selected.value) {
      for (const name of names) {
        out.push({ repoDefault: object.metadata?.name ?? '', packageDefault: name, template, object, targetIndex });
      }
    }
  }
  return { ok: true, value: out };
}
