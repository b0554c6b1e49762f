/**
 * set-image (catalog v0.1): every container image (`containers` and `initContainers` lists at
 * any depth, kustomize's image fields) whose name, without tag or digest, is `name` becomes
 * `newName` (or keeps its name) with `newTag` or `digest` (or keeps its tag). Config: a ConfigMap
 * with `name`, `newName`, `newTag`, `digest`, or `SetImage` with `image` and `additionalImageFields`.
 */
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { BuiltinConfigError, isKind, mapsAt, resultFor, specApplies, stringData, type Builtin, type FieldSpec } from './fields.js';
import type { KrmResult } from '../results.js';

const CONTAINER_LISTS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/** `nginx:1.2@sha256:…` → name `nginx`; a colon in the registry part is a port, not a tag. */
export function splitImage(image: string): { name: string; tag?: string; digest?: string } {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at + 1) : undefined;
  const rest = at >= 0 ? image.slice(0, at) : image;
  const slash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  const tag = colon > slash ? rest.slice(colon + 1) : undefined;
  const name = colon > slash ? rest.slice(0, colon) : rest;
  return { name, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

export const setImage: Builtin = ({ items, config }) => {
  let spec: Record<string, string>;
  let extra: FieldSpec[] = [];
  if (isKind(config, 'v1', 'ConfigMap')) spec = stringData(config);
  else if (isKind(config, undefined, 'SetImage')) {
    spec = stringData(config, 'image');
    const fields = config?.['additionalImageFields'];
    if (Array.isArray(fields))
      extra = fields.filter((f): f is FieldSpec => typeof f === 'object' && f !== null && typeof (f as FieldSpec).path === 'string');
  } else
    throw new BuiltinConfigError(
      `unknown functionConfig Kind=${String(config?.['kind'] ?? '')} ApiVersion=${String(config?.['apiVersion'] ?? '')}, expect \`SetImage\` or \`ConfigMap\``,
    );
  const name = spec['name'] ?? '';
  const { newName, newTag, digest } = spec;
  if (name === '') throw new BuiltinConfigError('must specify `name`');
  if (!newName && !newTag && !digest) throw new BuiltinConfigError('must specify one of `newName`, `newTag`, or `digest`');
  if (newTag && digest) throw new BuiltinConfigError('`newTag` and `digest` cannot both be set');

  const results: KrmResult[] = [];
  for (const item of items) {
    const update = (node: Node | null | undefined, path: string) => {
      if (!isScalar(node) || typeof node.value !== 'string') return;
      const old = splitImage(node.value);
      if (old.name !== name) return;
      const base = newName || old.name;
      const next = digest
        ? `${base}@${digest}`
        : newTag
          ? `${base}:${newTag}`
          : `${base}${old.tag !== undefined ? `:${old.tag}` : ''}${old.digest !== undefined ? `@${old.digest}` : ''}`;
      if (next === node.value) return;
      results.push(resultFor(item, `set image from ${JSON.stringify(node.value)} to ${JSON.stringify(next)}`, 'info', path));
      node.value = next;
    };
    const walk = (node: unknown, path: string) => {
      if (isMap(node)) {
        for (const pair of node.items) {
          const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
          const p = path === '' ? key : `${path}.${key}`;
          if (CONTAINER_LISTS.has(key) && isSeq(pair.value)) {
            pair.value.items.forEach((c, i) => {
              if (isMap(c)) update(c.get('image', true) as Node, `${p}[${i}].image`);
            });
          } else walk(pair.value, p);
        }
      } else if (isSeq(node)) node.items.forEach((el, i) => walk(el, `${path}[${i}]`));
    };
    walk(item.doc.contents, '');
    for (const f of extra) {
      if (!specApplies(item.doc, f)) continue;
      const parts = f.path.split('/');
      const leaf = parts.pop() as string;
      for (const map of mapsAt(item.doc, parts.join('/'), f.create ?? false)) update(map.get(leaf, true) as Node, f.path);
    }
  }
  return { results };
};
