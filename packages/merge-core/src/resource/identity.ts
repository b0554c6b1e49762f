/**
 * Resource identity (seed 001): group (from apiVersion, not the version), kind, namespace and
 * name. A `# kpt-merge: <ns>/<name>` comment on `metadata` (or kpt's upstream-identifier
 * annotation) names the resource as upstream knows it, so a locally renamed resource still matches.
 */
import { isMap, isScalar, type YAMLMap } from 'yaml';
import { fieldValue, findPair, stringField } from '../yaml/nodes.js';

export interface ResourceIdentity {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export const upstreamIdentifierAnnotation = 'internal.kpt.dev/upstream-identifier';
const mergeComment = /kpt-merge:\s*([^\s/]*)\/(\S+)/;

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** The identity a resource is matched by; undefined for a document that is not a resource. */
export function identityOf(resource: YAMLMap): ResourceIdentity | undefined {
  const apiVersion = stringField(resource, 'apiVersion');
  const kind = stringField(resource, 'kind');
  const metadata = fieldValue(resource, 'metadata');
  if (!apiVersion || !kind) return undefined;
  const group = groupOf(apiVersion);
  const meta = isMap(metadata) ? metadata : undefined;
  const fromComment = mergeCommentOf(resource);
  if (fromComment) return { group, kind, ...fromComment };
  const fromAnnotation = upstreamIdentifierOf(meta);
  if (fromAnnotation && fromAnnotation.group === group && fromAnnotation.kind === kind) return fromAnnotation;
  const name = stringField(meta, 'name');
  if (name === undefined) return undefined;
  return { group, kind, namespace: stringField(meta, 'namespace') ?? '', name };
}

/** The `# kpt-merge: ns/name` comment on the `metadata` key, wherever the parser filed it. */
export function mergeCommentOf(resource: YAMLMap): { namespace: string; name: string } | undefined {
  const pair = findPair(resource, 'metadata');
  if (!pair) return undefined;
  const key = pair.key as { comment?: string | null };
  const value = pair.value as { commentBefore?: string | null; comment?: string | null } | null;
  for (const text of [key?.comment, value?.commentBefore, value?.comment]) {
    const match = text ? mergeComment.exec(text) : null;
    if (match) return { namespace: match[1]!, name: match[2]! };
  }
  return undefined;
}

function upstreamIdentifierOf(metadata: YAMLMap | undefined): ResourceIdentity | undefined {
  const annotations = fieldValue(metadata, 'annotations');
  if (!isMap(annotations)) return undefined;
  const value = fieldValue(annotations, upstreamIdentifierAnnotation);
  if (!isScalar(value) || typeof value.value !== 'string') return undefined;
  const parts = value.value.split('|');
  if (parts.length !== 4) return undefined;
  const [group, kind, namespace, name] = parts as [string, string, string, string];
  return { group, kind, namespace: namespace === 'default' ? '' : namespace, name };
}

/** `apps/Deployment default/web`; `ConfigMap settings` when cluster-scoped or unnamespaced. */
export function formatIdentity(id: ResourceIdentity): string {
  return `${id.group ? `${id.group}/` : ''}${id.kind} ${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
}

export function identityKey(id: ResourceIdentity): string {
  return `${id.group}\u0000${id.kind}\u0000${id.namespace}\u0000${id.name}`;
}
