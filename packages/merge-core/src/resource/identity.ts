/**
 * Resource identity (seed 001): group (from apiVersion, not the version), kind, namespace and
 * name. A `# kpt-merge: <ns>/<name>` comment on `metadata` (or kpt's upstream-identifier
 * annotation) names the resource as upstream knows it, so a locally renamed resource still matches.
 */
import { isMap, isScalar, type YAMLMap } from 'yaml';
import { fieldValue, findPair, stringField } from '../yaml/nodes.js';
import { type ScannedDocument, type ScannedOrDeclined, type ScannedPair, scannedPair } from '../yaml/scan.js';

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

/** What a scan of a document says it is, for matching without a parse. */
export interface ScannedResource {
  readonly identity: ResourceIdentity | undefined;
  readonly kind: string | undefined;
}

const UNSURE = Symbol('unsure');

/**
 * `identityOf` read from a scanned document, or undefined when the scan cannot be sure the parse
 * would say the same (a merge comment or an upstream identifier anywhere but where the scan looks,
 * a value YAML 1.1 would not read as a string...).
 */
export function scannedIdentityOf(document: ScannedDocument, fileText: string): ScannedResource | undefined {
  const root = document.root;
  if (!root) return { identity: undefined, kind: undefined };
  const str = (pair: ScannedPair | undefined): string | undefined | typeof UNSURE => {
    const v = pair?.value;
    if (!v || v.kind === 'empty' || v.kind === 'map' || v.kind === 'seq' || v.kind === 'flow-map' || v.kind === 'flow-seq')
      return undefined;
    if (v.kind === 'block-scalar' || v.str === null) return UNSURE;
    return v.str;
  };
  const apiVersion = str(scannedPair(root, 'apiVersion'));
  const kind = str(scannedPair(root, 'kind'));
  if (apiVersion === UNSURE || kind === UNSURE) return undefined;
  if (!apiVersion || !kind) return { identity: undefined, kind };
  const metaPair = scannedPair(root, 'metadata');
  if (!metaPair) return { identity: undefined, kind };
  const meta = metaPair.value;
  if (meta.kind !== 'map') return undefined;
  const group = groupOf(apiVersion);
  const lineEnd = fileText.indexOf('\n', metaPair.keyEnd);
  const keyLine = fileText.slice(metaPair.keyEnd, lineEnd === -1 ? fileText.length : lineEnd);
  const hash = keyLine.indexOf('#');
  const match = hash === -1 ? null : mergeComment.exec(keyLine.slice(hash));
  // The parser files comments in several places: only the `metadata:` line is read here.
  const mentions = document.text.split('kpt-merge').length - 1;
  if (mentions !== (hash !== -1 && keyLine.includes('kpt-merge', hash) ? 1 : 0)) return undefined;
  if (match) return { identity: { group, kind, namespace: match[1]!, name: match[2]! }, kind };
  if (document.text.includes(upstreamIdentifierAnnotation)) return undefined;
  const name = str(scannedPair(meta.items, 'name'));
  const namespace = str(scannedPair(meta.items, 'namespace'));
  if (name === UNSURE || namespace === UNSURE) return undefined;
  if (name === undefined) return { identity: undefined, kind };
  return { identity: { group, kind, namespace: namespace ?? '', name }, kind };
}

/**
 * A document of a file as the merge identifies it without a parse: its text, and what a scan says
 * it is (`resource`), or undefined where only a parse can say (the merge then parses it alone).
 */
export interface IdentifiedDocument {
  readonly text: string;
  readonly empty: boolean;
  readonly resource: ScannedResource | undefined;
}

/**
 * How the merge identifies a document of `fileText` the scanner read. With `marked`, the document
 * as it reads once kpt's marks are written into it (kptfile-model's merge comments): `text` is
 * its new text, whose `metadata:` line carries `# kpt-merge: <namespace>/<name>`. The marks name
 * the identity the document already had, so the scan of the unmarked text says what a scan of the
 * marked one would, where the comment reads back as that identity and is its only mention; else
 * the identity is left to a parse. A caller that marks a text so spares the merge a second scan.
 */
export function identifyScanned(
  document: ScannedOrDeclined,
  fileText: string,
  marked?: { readonly text: string; readonly namespace: string; readonly name: string },
): IdentifiedDocument {
  if (document.declined) return { text: marked?.text ?? document.text, empty: false, resource: undefined };
  const resource = scannedIdentityOf(document, fileText);
  if (!marked) return { text: document.text, empty: document.empty, resource };
  const id = resource?.identity;
  const readBack = mergeComment.exec(`kpt-merge: ${marked.namespace}/${marked.name}`);
  const same =
    id !== undefined &&
    readBack?.[1] === id.namespace &&
    readBack[2] === id.name &&
    marked.namespace === id.namespace &&
    marked.name === id.name &&
    marked.text.split('kpt-merge').length === 2;
  return { text: marked.text, empty: document.empty, resource: same ? resource : undefined };
}
