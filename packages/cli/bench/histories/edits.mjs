// Realistic local edits, planned once per release pair from upstream's two versions and applied the
// same way to the package each tool fetched:
// - a value upstream also changes (the first scalar that differs between the two releases in a
//   resource both have, setters ConfigMaps included) gets a local value: a conflict upstream wins;
// - a label is added to the first resource;
// - the most common namespace is changed (as `set-namespace` would) on every resource that has it;
// - a local-only ConfigMap file is added.
// Files are rewritten only where the data changed, keeping the other documents of the file.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isScalar, parseAllDocuments, stringify } from 'yaml';
import { identityOf, readPackage } from './compare.mjs';

export const localLabel = ['example.com/edited-locally', 'true'];
export const localFile = 'local-only.yaml';

const isLeaf = (v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const skippedLeaf = (path) =>
  path[0] === 'apiVersion' || path[0] === 'kind' || (path[0] === 'metadata' && ['name', 'namespace', 'annotations'].includes(path[1]));

function firstChangedScalar(a, b, path = []) {
  if (isLeaf(a) && isLeaf(b)) return a !== b && !skippedLeaf(path) ? path : undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const p = firstChangedScalar(a[i], b[i], [...path, i]);
      if (p) return p;
    }
    return undefined;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of Object.keys(a)) {
      if (!(k in b)) continue;
      const p = firstChangedScalar(a[k], b[k], [...path, k]);
      if (p) return p;
    }
  }
  return undefined;
}

function localValue(v) {
  if (typeof v === 'number') return v + 1;
  if (typeof v === 'boolean') return !v;
  return `${v}-local`;
}

const isKptfile = (id) => id.split('|')[1] === 'Kptfile';

/** The edits for one release pair, from upstream's package directories at the two tags. */
export function planEdits(oldDir, newDir) {
  const before = readPackage(oldDir).resources;
  const after = readPackage(newDir).resources;
  const plan = {};
  const ids = [...before.keys()].filter((id) => !isKptfile(id));
  const entries = ids.flatMap((id) => before.get(id).map((r) => ({ id, ...r }))).sort((x, y) => x.file.localeCompare(y.file));
  for (const r of entries) {
    const next = after.get(r.id)?.find((s) => s.file === r.file);
    const path = next && firstChangedScalar(r.value, next.value);
    if (path) {
      plan.value = { file: r.file, id: r.id, path, value: localValue(path.reduce((v, k) => v[k], r.value)) };
      break;
    }
  }
  if (entries[0]) plan.label = { file: entries[0].file, id: entries[0].id };
  const counts = new Map();
  for (const r of entries) {
    const ns = r.value.metadata?.namespace;
    if (typeof ns === 'string' && ns) counts.set(ns, (counts.get(ns) ?? 0) + 1);
  }
  const top = [...counts].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))[0];
  if (top) plan.namespace = { from: top[0], to: `${top[0]}-local` };
  plan.file = {
    path: localFile,
    text: stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'local-only', ...(plan.namespace ? { namespace: plan.namespace.to } : {}) },
      data: { owner: 'local' },
    }),
  };
  return plan;
}

// Edits are spliced into the text at the nodes' source ranges, as an editor would make them: the
// rest of the file, `# kpt-merge:` comments on the `metadata:` line included, stays byte for byte
// (printing the document again with `yaml` would move those comments and change what tools match).
const plainSafe = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;
function scalarSource(v) {
  if (typeof v !== 'string') return String(v);
  return plainSafe.test(v) && !/^(true|false|null|yes|no|on|off|~|[-+.\d][\d._eE+-]*)$/i.test(v) ? v : JSON.stringify(v);
}
const lineStart = (text, pos) => text.lastIndexOf('\n', pos - 1) + 1;
const indentAt = (text, pos) => pos - lineStart(text, pos);

/** The splice that sets `value` at `path` of an existing scalar, or undefined. */
function setScalar(text, doc, path, value) {
  const node = doc.getIn(path, true);
  if (!isScalar(node) || !node.range) return undefined;
  const [from, to] = node.range;
  return { from, to, text: scalarSource(value) + (text.slice(from, to).endsWith('\n') ? '\n' : '') };
}

/** The splice that adds `key: value` to the map at `path` (creating the map in `metadata` if absent). */
function addEntry(text, doc, path, key, value) {
  const node = doc.getIn(path, true);
  const entry = `${scalarSource(key)}: ${scalarSource(value)}`;
  if (isMap(node) && node.range) {
    if (node.flow) {
      const close = text.lastIndexOf('}', node.range[1] - 1);
      return { from: close, to: close, text: node.items.length ? `, ${entry}` : entry };
    }
    const first = node.items[0]?.key?.range?.[0];
    if (first === undefined) return undefined;
    const at = lineStart(text, first);
    return { from: at, to: at, text: `${' '.repeat(indentAt(text, first))}${entry}\n` };
  }
  if (node !== undefined) return undefined;
  const parent = doc.getIn(path.slice(0, -1), true);
  if (!isMap(parent) || !parent.range) return undefined;
  const name = path[path.length - 1];
  if (parent.flow) {
    const open = text.indexOf('{', parent.range[0]);
    return { from: open + 1, to: open + 1, text: `${name}: {${entry}}${parent.items.length ? ', ' : ''}` };
  }
  const first = parent.items[0]?.key?.range?.[0];
  if (first === undefined) return undefined;
  const at = lineStart(text, first);
  const indent = ' '.repeat(indentAt(text, first));
  return { from: at, to: at, text: `${indent}${name}:\n${indent}  ${entry}\n` };
}

/** Applies the splices `edit` returns for each document of a file; false when nothing applied. */
function editFile(pkgDir, file, edit) {
  const full = join(pkgDir, file);
  let text;
  try {
    text = readFileSync(full, 'utf8');
  } catch {
    return false;
  }
  const docs = parseAllDocuments(text);
  if (docs.some((d) => d.errors.length > 0)) return false;
  const splices = docs.flatMap((doc) => (edit(doc, text) ?? []).filter(Boolean));
  if (splices.length === 0) return false;
  splices.sort((a, b) => b.from - a.from);
  let next = text;
  for (const s of splices) next = next.slice(0, s.from) + s.text + next.slice(s.to);
  if (parseAllDocuments(next).some((d) => d.errors.length > 0)) throw new Error(`local edit broke ${full}`);
  writeFileSync(full, next);
  return true;
}

/** Applies `plan` to the package in `pkgDir`; returns what was done, for the report. */
export function applyEdits(pkgDir, plan) {
  const done = [];
  const forId = (id, f) => (doc, text) => (identityOf(doc.toJS()) === id ? [f(doc, text)] : []);
  if (
    plan.value &&
    editFile(
      pkgDir,
      plan.value.file,
      forId(plan.value.id, (d, t) => setScalar(t, d, plan.value.path, plan.value.value)),
    )
  )
    done.push(`value ${plan.value.file} .${plan.value.path.join('.')}=${JSON.stringify(plan.value.value)}`);
  if (
    plan.label &&
    editFile(
      pkgDir,
      plan.label.file,
      forId(plan.label.id, (d, t) => addEntry(t, d, ['metadata', 'labels'], ...localLabel)),
    )
  )
    done.push(`label ${plan.label.file}`);
  if (plan.namespace) {
    let n = 0;
    const { resources } = readPackage(pkgDir);
    const files = new Set([...resources.values()].flat().map((r) => r.file));
    for (const file of files) {
      editFile(pkgDir, file, (doc, text) => {
        const v = doc.toJS();
        if (!identityOf(v) || v.kind === 'Kptfile' || v.metadata?.namespace !== plan.namespace.from) return [];
        const splice = setScalar(text, doc, ['metadata', 'namespace'], plan.namespace.to);
        if (splice) n++;
        return [splice];
      });
    }
    if (n > 0) done.push(`namespace ${plan.namespace.from}→${plan.namespace.to} on ${n}`);
  }
  writeFileSync(join(pkgDir, plan.file.path), plan.file.text);
  done.push(`file ${plan.file.path}`);
  return done;
}
