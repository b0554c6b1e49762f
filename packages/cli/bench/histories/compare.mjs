// Two packages compared as data: every YAML file parsed with `yaml`, resources matched by identity
// (group, kind, namespace, name) wherever they are written, other documents by file and position,
// every other file by its text. What the tools write for their own bookkeeping is left out (listed in
// `ignoredAnnotations`, with the reason in the README).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isMap, isScalar as isScalarNode, isSeq, parseAllDocuments } from 'yaml';

export const ignoredAnnotations = [
  // written by both tools on get; kpt drops it from some resources it re-adds (see differential.test.ts)
  'internal.kpt.dev/upstream-identifier',
  // kpt's attribution on get for Config Connector resources; kdelta writes none
  'cnrm.cloud.google.com/blueprint',
  // kio bookkeeping, written only by a tool that leaks it
  'config.kubernetes.io/index',
  'config.kubernetes.io/path',
  'internal.config.kubernetes.io/index',
  'internal.config.kubernetes.io/path',
  'internal.config.kubernetes.io/id',
  'internal.config.kubernetes.io/annotations-migration-resource-id',
];

const isYamlFile = (name) => name === 'Kptfile' || name.endsWith('.yaml') || name.endsWith('.yml');

function walk(root, dir = root, out = []) {
  for (const entry of readdirSync(dir).sort()) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) walk(root, full, out);
    else out.push(relative(root, full));
  }
  return out;
}

/** group|kind|namespace|name of a KRM object, or undefined for any other document. */
export function identityOf(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { apiVersion, kind, metadata } = value;
  if (typeof kind !== 'string' || typeof apiVersion !== 'string' || typeof metadata?.name !== 'string') return undefined;
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  return `${group}|${kind}|${metadata.namespace ?? ''}|${metadata.name}`;
}

function withoutBookkeeping(value) {
  const annotations = value?.metadata?.annotations;
  if (annotations && typeof annotations === 'object') {
    for (const a of ignoredAnnotations) delete annotations[a];
    if (Object.keys(annotations).length === 0) delete value.metadata.annotations;
  }
  return value;
}

/**
 * A package as data: { resources: Map<identity, [{ file, value }]>, documents: Map<file#n, value>,
 * texts: Map<file, text> } (texts hold non-YAML files and YAML files that do not parse).
 */
export function readPackage(root) {
  const resources = new Map();
  const documents = new Map();
  const texts = new Map();
  for (const file of walk(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const name = file.split('/').pop();
    if (!isYamlFile(name)) {
      texts.set(file, text);
      continue;
    }
    const docs = parseAllDocuments(text);
    if (docs.some((d) => d.errors.length > 0)) {
      texts.set(file, text);
      continue;
    }
    if (docs.length > 0) readEndAsKubernetes(docs[docs.length - 1], text);
    docs.forEach((doc, index) => {
      const value = doc.toJS({ maxAliasCount: -1 });
      if (value === null || value === undefined) return;
      // a Kptfile is named after its directory: it is matched by its path, so that a field of its
      // metadata (a namespace one tool drops) shows as that field
      const id = value?.kind === 'Kptfile' && name === 'Kptfile' ? `kpt.dev|Kptfile||${file}` : identityOf(value);
      if (id === undefined) documents.set(`${file}#${index}`, value);
      else {
        if (!resources.has(id)) resources.set(id, []);
        resources.get(id).push({ file, value: withoutBookkeeping(value), comments: commentsOf(doc) });
      }
    });
  }
  return { resources, documents, texts };
}

/**
 * A block scalar (`|`, `>`) on a file's last line with no line break after it: yaml reads a line
 * break into its value, Kubernetes' reader (go-yaml) reads none. Its value is read as Kubernetes
 * reads it, as merge-core reads it (`blockScalarAtEnd` in its yaml/parse.ts): a tool that leaves
 * such a file as upstream wrote it and one that writes it as `|-` with a final line break give the
 * same data.
 */
function readEndAsKubernetes(doc, text) {
  if (text.endsWith('\n') || text.endsWith('\r')) return;
  let node = doc.contents;
  while (isMap(node) || isSeq(node)) {
    const last = node.items[node.items.length - 1];
    node = isMap(node) ? last?.value : last;
  }
  const block = isScalarNode(node) && (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED');
  if (block && (node.range?.[1] ?? -1) >= text.length && typeof node.value === 'string' && node.value.endsWith('\n'))
    node.value = node.value.slice(0, -1);
}

/**
 * The comments of a document by the path they belong to (a key's and its value's together, since
 * tools place one comment on either), `# kpt-merge:` comments left out: `path: text` lines, sorted.
 */
export function commentsOf(doc) {
  const out = [];
  const add = (path, c) => {
    for (const line of (c ?? '').split('\n')) {
      const text = line.trim();
      if (text && !text.startsWith('kpt-merge:')) out.push(`${path || '.'}: ${text}`);
    }
  };
  const walk = (node, path) => {
    if (!node || typeof node !== 'object') return;
    add(path, node.commentBefore);
    add(path, node.comment);
    if (isMap(node))
      for (const [i, pair] of node.items.entries()) {
        const key = `${path}.${pair.key?.value ?? pair.key}`;
        // a file's header comment is the document's, whichever node a tool hangs it on
        walk(pair.key, path === '' && i === 0 && isScalarNode(pair.key) && pair.key.commentBefore ? '' : key);
        walk(pair.value, key);
      }
    else if (isSeq(node)) node.items.forEach((item, i) => walk(item, `${path}[${i}]`));
  };
  add('', doc.commentBefore);
  walk(doc.contents, '');
  add('', doc.comment);
  return out.sort();
}

export function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical(value[k])]),
    );
  return value;
}
const same = (a, b) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
const show = (v) => {
  const s = JSON.stringify(v);
  return s === undefined ? 'absent' : s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

/** The places where two values differ, each { path, cause, kpt, kdelta }. */
export function valueDifferences(kpt, kdelta, path = '') {
  if (same(kpt, kdelta)) return [];
  if (Array.isArray(kpt) && Array.isArray(kdelta)) {
    const key = (v) => JSON.stringify(canonical(v));
    if (kpt.length === kdelta.length && [...kpt.map(key)].sort().join('\n') === [...kdelta.map(key)].sort().join('\n'))
      return [
        {
          path: path || '.',
          cause: 'list order',
          kpt: kpt.map((v) => v?.name ?? '').join(','),
          kdelta: kdelta.map((v) => v?.name ?? '').join(','),
        },
      ];
    const out = [];
    for (let i = 0; i < Math.max(kpt.length, kdelta.length); i++) out.push(...valueDifferences(kpt[i], kdelta[i], `${path}[${i}]`));
    return out;
  }
  const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isMap(kpt) && isMap(kdelta)) {
    const out = [];
    for (const k of new Set([...Object.keys(kpt), ...Object.keys(kdelta)]))
      out.push(...valueDifferences(kpt[k], kdelta[k], `${path}.${k}`));
    return out;
  }
  let cause = 'value';
  if ((kpt === undefined && kdelta === null) || (kpt === null && kdelta === undefined)) cause = 'null vs absent';
  else if (kpt === undefined) cause = 'field only in kdelta';
  else if (kdelta === undefined) cause = 'field only in kpt';
  else if (typeof kpt !== typeof kdelta && String(kpt) === String(kdelta)) cause = 'scalar type';
  else if (typeof kpt === 'string' && typeof kdelta === 'string' && kpt.replace(/\n+$/, '') === kdelta.replace(/\n+$/, ''))
    cause = 'trailing newline';
  return [{ path: path || '.', cause, kpt: show(kpt), kdelta: show(kdelta) }];
}

const label = (id) => {
  const [group, kind, ns, name] = id.split('|');
  return `${kind}${group ? `.${group}` : ''} ${ns ? `${ns}/` : ''}${name}`;
};

/**
 * The differences between the package kpt wrote and the one kdelta wrote, each
 * { where, cause, path?, kpt?, kdelta? }; `layout` lists resources equal as data in other files.
 */
export function comparePackages(kptDir, kdeltaDir) {
  const a = readPackage(kptDir);
  const b = readPackage(kdeltaDir);
  const differences = [];
  const layout = [];
  const comments = [];
  for (const id of new Set([...a.resources.keys(), ...b.resources.keys()])) {
    const x = a.resources.get(id) ?? [];
    const y = b.resources.get(id) ?? [];
    const where = label(id);
    const kptfile = id.split('|')[1] === 'Kptfile';
    const tag = (cause) => (kptfile ? `Kptfile: ${cause}` : cause);
    if (x.length !== y.length) {
      const cause = y.length === 0 ? 'resource only in kpt' : x.length === 0 ? 'resource only in kdelta' : 'resource count';
      differences.push({ where, cause: tag(cause), kpt: x.map((r) => r.file).join(','), kdelta: y.map((r) => r.file).join(',') });
      continue;
    }
    // duplicates (one resource in two files) are paired by file, then in order
    const byFile = (rs) => [...rs].sort((p, q) => p.file.localeCompare(q.file));
    const [xs, ys] = [byFile(x), byFile(y)];
    xs.forEach((r, i) => {
      const s = ys[i];
      for (const d of valueDifferences(r.value, s.value)) differences.push({ where, ...d, cause: tag(d.cause) });
      const [ca, cb] = [r.comments ?? [], s.comments ?? []];
      const onlyKpt = ca.filter((c) => !cb.includes(c));
      const onlyKdelta = cb.filter((c) => !ca.includes(c));
      // kpt writes its Kptfile from a struct, without comments: only resources' comments are compared
      if (!kptfile && (onlyKpt.length || onlyKdelta.length)) comments.push({ where, kpt: onlyKpt, kdelta: onlyKdelta });
      if (r.file !== s.file) layout.push({ where, kpt: r.file, kdelta: s.file });
    });
  }
  for (const key of new Set([...a.documents.keys(), ...b.documents.keys()])) {
    for (const d of valueDifferences(a.documents.get(key), b.documents.get(key)))
      differences.push({ where: key, ...d, cause: `non-KRM document: ${d.cause}` });
  }
  for (const file of new Set([...a.texts.keys(), ...b.texts.keys()])) {
    const [x, y] = [a.texts.get(file), b.texts.get(file)];
    if (x === y) continue;
    const cause = x === undefined ? 'file only in kdelta' : y === undefined ? 'file only in kpt' : 'file text';
    differences.push({
      where: file,
      cause,
      kpt: x === undefined ? 'absent' : `${x.length} chars`,
      kdelta: y === undefined ? 'absent' : `${y.length} chars`,
    });
  }
  // Kubernetes reads a field set to null as absent (kpt removes such fields from every resource it
  // merges, kdelta keeps upstream's text): listed apart, as `layout` is, not counted as a difference
  const equivalent = differences.filter((d) => d.cause.endsWith('null vs absent'));
  return { differences: differences.filter((d) => !equivalent.includes(d)), layout, equivalent, comments };
}

/** One line per difference, for reports. */
export function describeDifference(d) {
  return `${d.where}${d.path ? ` ${d.path}` : ''}: ${d.cause}${d.kpt !== undefined ? ` (kpt ${d.kpt}; kdelta ${d.kdelta})` : ''}`;
}
