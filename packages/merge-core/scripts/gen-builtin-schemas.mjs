#!/usr/bin/env node
// Generates src/schema/builtin.generated.ts: the compact table of what a merge needs to know
// about the built-in Kubernetes kinds (list types, merge keys, map types), derived from the
// OpenAPI definitions bundled by kyaml (Kubernetes v1.21.2).
//
// Usage: node scripts/gen-builtin-schemas.mjs [path-to-openapi.json] [output.ts]
// Default input: the shared/ folder beside the repository
// (../../../../shared/schemas/kubernetes-openapi-v1.21.2.json relative to this script).
//
// What is kept: for every definition reachable from a resource kind, the properties that are
// lists, objects with x-kubernetes-map-type, or that lead (through $ref, items or
// additionalProperties) to such. Scalars and objects with nothing to say are dropped: the merge
// treats an undescribed field exactly like a scalar or a granular map. Definitions that are
// structurally identical after pruning (apps/v1 and apps/v1beta2 DeploymentSpec, ...) share one
// entry that carries all their names.

import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, resolve, relative, basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const input = resolve(process.argv[2] ?? resolve(here, '../../../../shared/schemas/kubernetes-openapi-v1.21.2.json'));
const output = resolve(process.argv[3] ?? resolve(here, '../src/schema/builtin.generated.ts'));

/** @type {{definitions: Record<string, any>, resources: {apiVersion: string, kind: string, definition: string}[]}} */
let doc;
try {
  doc = JSON.parse(readFileSync(input, 'utf8'));
} catch (err) {
  console.error(`gen-builtin-schemas: cannot read ${input}: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}
if (!doc || typeof doc.definitions !== 'object' || !Array.isArray(doc.resources)) {
  console.error(`gen-builtin-schemas: ${input}: expected an object with "definitions" and "resources[]"`);
  process.exit(1);
}
const defs = doc.definitions;
// Resources without a definition (NodeProxyOptions, PodExecOptions, ...) are connect options,
// never stored objects: nothing to merge.
const resources = doc.resources.filter((r) => typeof r.definition === 'string');
const REF = '#/definitions/';

function refName(node) {
  const ref = node?.$ref;
  if (typeof ref !== 'string') return undefined;
  if (!ref.startsWith(REF)) throw new Error(`unsupported $ref ${ref}`);
  const name = ref.slice(REF.length);
  if (!(name in defs)) throw new Error(`dangling $ref ${ref}`);
  return name;
}

/** The list type of an array schema, by the rules of KEP 0006 with the patch-strategy fallback. */
function listInfo(node) {
  const lt = node['x-kubernetes-list-type'];
  const strategies = String(node['x-kubernetes-patch-strategy'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const pmk = node['x-kubernetes-patch-merge-key'];
  const lmk = node['x-kubernetes-list-map-keys'];
  const keysOf = () => (Array.isArray(lmk) && lmk.length > 0 ? lmk.map(String) : typeof pmk === 'string' && pmk ? [pmk] : []);
  if (lt === 'atomic' || lt === 'set' || lt === 'map') {
    return { l: lt, k: lt === 'map' ? keysOf() : [], x: true };
  }
  if (strategies.includes('merge')) {
    return typeof pmk === 'string' && pmk ? { l: 'map', k: keysOf(), x: true } : { l: 'set', k: [], x: true };
  }
  return { l: 'atomic', k: [], x: strategies.length > 0 };
}

// --- 1. which definitions matter (fixpoint over the reference graph) -------------------------

/** Definitions reachable from some resource kind. */
const reachable = new Set();
{
  const stack = resources.map((r) => r.definition);
  const visitNode = (node) => {
    if (!node || typeof node !== 'object') return;
    const name = refName(node);
    if (name) stack.push(name);
    if (node.items) visitNode(node.items);
    if (node.additionalProperties && typeof node.additionalProperties === 'object') visitNode(node.additionalProperties);
    for (const p of Object.values(node.properties ?? {})) visitNode(p);
    for (const a of node.allOf ?? []) visitNode(a);
  };
  while (stack.length) {
    const name = stack.pop();
    if (reachable.has(name)) continue;
    if (!(name in defs)) throw new Error(`resource definition ${name} missing`);
    reachable.add(name);
    visitNode(defs[name]);
  }
}

/** A node matters when it is a list, an atomic map, or leads to something that matters. */
const relevantDefs = new Set();
function nodeRelevant(node) {
  if (!node || typeof node !== 'object') return false;
  const name = refName(node);
  if (name) return relevantDefs.has(name);
  if (node.type === 'array' || node.items) return true;
  if (node['x-kubernetes-map-type'] === 'atomic') return true;
  if (node.additionalProperties && typeof node.additionalProperties === 'object' && nodeRelevant(node.additionalProperties)) return true;
  for (const p of Object.values(node.properties ?? {})) if (nodeRelevant(p)) return true;
  if (Array.isArray(node.allOf) && node.allOf.some(nodeRelevant)) return true;
  return false;
}
for (let changed = true; changed; ) {
  changed = false;
  for (const name of reachable) {
    if (!relevantDefs.has(name) && nodeRelevant(defs[name])) {
      relevantDefs.add(name);
      changed = true;
    }
  }
}
// Every resource root is kept, even when it has nothing to say: the kind is then known.
const kept = new Set(relevantDefs);
for (const r of resources) kept.add(r.definition);

// --- 2. compact encoding, with references to definition names --------------------------------

/** Compact type: {r: name} | {l, k, x, i?} | {m?, f?, a?}; undefined when nothing to say. */
function compact(node) {
  if (!node || typeof node !== 'object') return undefined;
  const name = refName(node);
  if (name) return relevantDefs.has(name) ? { r: name } : undefined;
  if (Array.isArray(node.allOf) && node.allOf.length > 0 && !node.type && !node.properties && !node.items) {
    return compact(node.allOf[0]);
  }
  if (node.type === 'array' || node.items) {
    const info = listInfo(node);
    const items = compact(node.items);
    return { ...info, ...(items ? { i: items } : {}) };
  }
  const obj = compactObject(node);
  return obj.m || obj.f || obj.a ? obj : undefined;
}
function compactObject(node) {
  const out = {};
  if (node['x-kubernetes-map-type'] === 'atomic') out.m = 'atomic';
  const fields = {};
  for (const key of Object.keys(node.properties ?? {}).sort()) {
    const c = compact(node.properties[key]);
    if (c) fields[key] = c;
  }
  if (Object.keys(fields).length) out.f = fields;
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    const a = compact(node.additionalProperties);
    if (a) out.a = a;
  }
  return out;
}
const compactDefs = new Map([...kept].sort().map((name) => [name, compactObject(defs[name])]));

// --- 3. merge structurally identical definitions (partition refinement) ----------------------

function signature(value, classOf) {
  return JSON.stringify(value, (_k, v) => (v && typeof v === 'object' && typeof v.r === 'string' ? { r: classOf.get(v.r) } : v));
}
let classOf = new Map([...compactDefs.keys()].map((n) => [n, 0]));
for (let count = 1; ; ) {
  const ids = new Map();
  const next = new Map();
  for (const [name, value] of compactDefs) {
    const sig = `${classOf.get(name)}|${signature(value, classOf)}`;
    if (!ids.has(sig)) ids.set(sig, ids.size);
    next.set(name, ids.get(sig));
  }
  classOf = next;
  if (ids.size === count) break;
  count = ids.size;
}
// One entry per class, ordered by its first name; references become entry indexes.
const classes = new Map();
for (const name of compactDefs.keys()) {
  const c = classOf.get(name);
  if (!classes.has(c)) classes.set(c, []);
  classes.get(c).push(name);
}
const entries = [...classes.values()];
const indexOfClass = new Map([...classes.keys()].map((c, i) => [c, i]));
const indexOf = (name) => indexOfClass.get(classOf.get(name));

// --- 4. resources: (group, kind) -> [[version, entry]] ---------------------------------------

const kinds = new Map();
for (const r of resources) {
  const slash = r.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : r.apiVersion.slice(0, slash);
  const version = slash < 0 ? r.apiVersion : r.apiVersion.slice(slash + 1);
  const key = `${group}\u0000${r.kind}`;
  if (!kinds.has(key)) kinds.set(key, { group, kind: r.kind, versions: [] });
  const versions = kinds.get(key).versions;
  if (!versions.some(([v]) => v === version)) versions.push([version, indexOf(r.definition)]);
}

// --- 5. emit ----------------------------------------------------------------------------------

const q = (s) => JSON.stringify(s);
function emitType(t) {
  if ('r' in t) return String(indexOf(t.r));
  if ('l' in t) {
    const parts = [`l: ${q(t.l)}`];
    if (t.k.length) parts.push(`k: ${q(t.k)}`);
    if (t.x) parts.push('x: 1');
    if (t.i) parts.push(`i: ${emitType(t.i)}`);
    return `{ ${parts.join(', ')} }`;
  }
  return emitObject(t);
}
function emitObject(o) {
  const parts = [];
  if (o.m) parts.push(`m: ${q(o.m)}`);
  if (o.f)
    parts.push(
      `f: { ${Object.entries(o.f)
        .map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : q(k)}: ${emitType(v)}`)
        .join(', ')} }`,
    );
  if (o.a) parts.push(`a: ${emitType(o.a)}`);
  return `{ ${parts.join(', ')} }`;
}

const lines = [];
lines.push('// GENERATED FILE - DO NOT EDIT.');
lines.push(`// Generated by packages/merge-core/scripts/gen-builtin-schemas.mjs from ${basename(input)}`);
lines.push('// (the Kubernetes v1.21.2 OpenAPI definitions bundled by kyaml; Apache-2.0).');
lines.push('// Regenerate: node packages/merge-core/scripts/gen-builtin-schemas.mjs [path-to-openapi.json]');
lines.push('// Format: see BuiltinTable in builtin-table.ts. Numbers are indexes into `defs`.');
lines.push('');
lines.push("import type { BuiltinTable } from './builtin-table.js';");
lines.push('');
lines.push('export const BUILTIN_TABLE: BuiltinTable = {');
lines.push('  defs: [');
entries.forEach((names, i) => {
  lines.push(`    /* ${i} */ [${q(names)}, ${emitObject(compactDefs.get(names[0]))}],`);
});
lines.push('  ],');
lines.push('  kinds: [');
for (const { group, kind, versions } of [...kinds.values()].sort((a, b) =>
  (a.group + '/' + a.kind).localeCompare(b.group + '/' + b.kind),
)) {
  lines.push(`    [${q(group)}, ${q(kind)}, ${q(versions)}],`);
}
lines.push('  ],');
lines.push('};');
lines.push('');
const text = lines.join('\n');
const tmp = `${output}.tmp-${process.pid}`;
writeFileSync(tmp, text);
renameSync(tmp, output);
console.log(
  `wrote ${relative(process.cwd(), output)}: ${text.length} bytes, ${entries.length} entries ` +
    `(${kept.size} of ${reachable.size} reachable definitions kept), ${kinds.size} group/kinds`,
);
