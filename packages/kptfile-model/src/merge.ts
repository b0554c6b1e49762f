/**
 * The Kptfile 3-way merge, as `kpt pkg update` does it:
 * - `upstream` / `upstreamLock` are never merged: local's are kept, or (with `updateUpstream`)
 *   replaced by upstream's where upstream has them; `metadata.name`/`namespace` stay local's;
 * - annotations, labels, `info`, `pipeline`, `inventory` and `status` are merged as one YAML
 *   value (kyaml rules, upstream wins conflicts) after giving the pipeline's functions their
 *   identity (seed 000, see pipeline-key.ts);
 * - lists with no identity are atomic: upstream's list replaces local's when upstream changed
 *   it, else local's is kept (readinessGates, conditions, a pipeline without usable keys, and
 *   each function's `selectors` / `exclude`, which seed 000 replaces whole when both diverged).
 */
import { parse as parseYaml, stringify } from 'yaml';
import { KptfileError, type KptfileIssue } from './errors.js';
import { printKptfile, readKptfileText, type ParsedKptfile } from './parse.js';
import { functionMergeKey, pipelineKeyMode, SYNTHETIC_NAME_PREFIX, type PipelineKeyMode } from './pipeline-key.js';
import { decodeKptfileNode } from './decode.js';
import { PIPELINE_LISTS, type KptFunction, type Kptfile, type Pipeline } from './types.js';
import { mergeValueText } from './value-merge.js';
import { formatIdentity, groupOf, isPinnedPair, PIN_COMMENT, type Conflict, type Decision } from '@kdelta/merge-core';
import { isMap, isSeq, parseDocument, type Node as YamlAstNode } from 'yaml';

export interface KptfileMergeInput {
  /** The Kptfile as last fetched (upstreamLock's version); absent when the package is new. */
  origin?: string;
  /** Upstream's Kptfile at the version being updated to. */
  upstream?: string;
  /** The local Kptfile. */
  local: string;
}

export interface KptfileMergeOptions {
  /** Take `upstream` and `upstreamLock` from upstream (where upstream has them). */
  updateUpstream?: boolean;
  /** File names used in errors; default `origin/Kptfile`, `upstream/Kptfile`, `Kptfile`. */
  files?: { origin?: string; upstream?: string; local?: string };
}

export interface KptfileMergeResult {
  /** The merged Kptfile. */
  readonly kptfile: Kptfile;
  /** The merged Kptfile printed over the local document: local comments and order kept. */
  readonly text: string;
  /** How the pipeline's functions were matched. */
  readonly pipelineKey: PipelineKeyMode;
  /** Where local and upstream both changed a field; `resource` and `file` name the local Kptfile. */
  readonly conflicts: readonly Conflict[];
  /** Fields kept as local has them because local pinned them (`# kdelta:local`). */
  readonly decisions: readonly Decision[];
}

type Plain = Record<string, unknown>;

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The sections kpt merges, as plain data, with the functions named for the merge. */
function mergeable(kf: Kptfile | undefined, mode: PipelineKeyMode): Plain | undefined {
  if (!kf) return undefined;
  const out: Plain = {};
  const meta: Plain = {};
  if (kf.metadata?.annotations) meta['annotations'] = clone(kf.metadata.annotations);
  if (kf.metadata?.labels) meta['labels'] = clone(kf.metadata.labels);
  if (Object.keys(meta).length > 0) out['metadata'] = meta;
  if (kf.info) out['info'] = clone(kf.info);
  if (kf.pipeline) {
    const p: Plain = {};
    for (const list of PIPELINE_LISTS) {
      const fns = kf.pipeline[list];
      if (!fns) continue;
      p[list] = fns.map((fn) => (mode === 'derived' ? { ...clone(fn), name: functionMergeKey(fn, mode) } : clone(fn)));
    }
    out['pipeline'] = p;
  }
  if (kf.inventory) out['inventory'] = clone(kf.inventory);
  if (kf.status) out['status'] = clone(kf.status);
  return out;
}

function atomic(o: unknown, u: unknown, l: unknown): { value: unknown; conflict: boolean } {
  if (same(o, u)) return { value: l, conflict: false };
  return { value: u, conflict: !same(o, l) && !same(u, l) };
}

function getPath(root: Plain | undefined, path: readonly string[]): unknown {
  let cur: unknown = root;
  for (const k of path) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Plain)[k];
  }
  return cur;
}

function setPath(root: Plain, path: readonly string[], value: unknown): void {
  let cur: Plain = root;
  for (const k of path.slice(0, -1)) {
    if (!cur[k] || typeof cur[k] !== 'object') {
      if (value === undefined) return;
      cur[k] = {};
    }
    cur = cur[k] as Plain;
  }
  const last = path[path.length - 1] as string;
  if (value === undefined) delete cur[last];
  else cur[last] = clone(value);
}

function findFn(side: Plain | undefined, list: string, key: string): Plain | undefined {
  const fns = getPath(side, ['pipeline', list]);
  if (!Array.isArray(fns)) return undefined;
  return (fns as Plain[]).find((f) => f['name'] === key);
}

const ATOMIC_PATHS: readonly (readonly string[])[] = [
  ['info', 'readinessGates'],
  ['status', 'conditions'],
];

function yamlOf(v: Plain | undefined): string | undefined {
  return v === undefined ? undefined : stringify(v, { lineWidth: 0 });
}

/** Merges three Kptfiles (texts). Throws `KptfileError` naming the file and field of bad input. */
export function mergeKptfile(input: KptfileMergeInput, options: KptfileMergeOptions = {}): KptfileMergeResult {
  const files = {
    origin: options.files?.origin ?? 'origin/Kptfile',
    upstream: options.files?.upstream ?? 'upstream/Kptfile',
    local: options.files?.local ?? 'Kptfile',
  };
  const issues: KptfileIssue[] = [];
  const parse = (text: string | undefined, file: string): ParsedKptfile | undefined => {
    if (text === undefined) return undefined;
    try {
      return readKptfileText(text, file);
    } catch (e) {
      if (e instanceof KptfileError) issues.push(...e.issues);
      else throw e;
      return undefined;
    }
  };
  const origin = parse(input.origin, files.origin);
  const upstream = parse(input.upstream, files.upstream);
  const local = parse(input.local, files.local);
  if (issues.length > 0 || !local) throw new KptfileError(issues);

  const mode = pipelineKeyMode([origin?.kptfile, upstream?.kptfile, local.kptfile]);
  const o = mergeable(origin?.kptfile, mode);
  const u = mergeable(upstream?.kptfile, mode);
  const l = mergeable(local.kptfile, mode) ?? {};

  const merged = mergeValueText({ origin: yamlOf(o), upstream: yamlOf(u), local: yamlOf(l) }, files.local);
  const m = ((parseYaml(merged.text) as Plain | null) ?? {}) as Plain;
  const decidedHere = (path: string): boolean =>
    /\.(selectors|exclude)\b|^\.?info\.readinessGates|^\.?status\.conditions/.test(path) ||
    (mode === 'none' && /^\.?pipeline\.(mutators|validators)/.test(path));
  const at: ConflictPlace = { file: files.local, resource: kptfileIdentity(local.kptfile) };
  const conflicts: Conflict[] = merged.conflicts.filter((c) => !decidedHere(c.path)).map((c) => describeCoreConflict(c, at));

  // Lists without identity: decided whole (kyaml would key some of them by an inferred name).
  const atomicPaths: string[][] = ATOMIC_PATHS.map((p) => [...p]);
  if (mode === 'none') for (const list of PIPELINE_LISTS) atomicPaths.push(['pipeline', list]);
  for (const path of atomicPaths) {
    const r = atomic(getPath(o, path), getPath(u, path), getPath(l, path));
    if (r.conflict) conflicts.push(conflictOf(at, path.join('.'), getPath(o, path), getPath(u, path), getPath(l, path)));
    if (getPath(m, path.slice(0, -1)) !== undefined || r.value !== undefined) setPath(m, path, r.value);
  }
  if (mode !== 'none') {
    for (const list of PIPELINE_LISTS) reconcileFunctions(list, { o, u, l, m }, conflicts, at);
    for (const list of PIPELINE_LISTS) {
      const fns = getPath(m, ['pipeline', list]);
      if (!Array.isArray(fns)) continue;
      for (const fn of fns as Plain[]) {
        const key = fn['name'] as string;
        for (const field of ['selectors', 'exclude']) {
          const [of, uf, lf] = [findFn(o, list, key), findFn(u, list, key), findFn(l, list, key)].map((f) => f?.[field]);
          const r = atomic(of, uf, lf);
          if (r.conflict) {
            conflicts.push(conflictOf(at, `pipeline.${list}[${keyLabel(key)}].${field}`, of, uf, lf));
          }
          if (r.value === undefined) delete fn[field];
          else fn[field] = clone(r.value);
        }
      }
    }
  }

  // A pipeline list local left as it was is upstream's, order included: functions run in
  // order, and kyaml's element-wise merge would keep the old order of a reordered pipeline.
  for (const list of PIPELINE_LISTS) {
    const path = ['pipeline', list];
    if (mode !== 'none' && u !== undefined && same(getPath(o, path), getPath(l, path)) && getPath(m, ['pipeline']) !== undefined) {
      setPath(m, path, getPath(u, path));
    }
  }

  // A section local does not have and the merge left empty is not added (kyaml would add it
  // as `{}` when upstream has it unchanged).
  for (const path of [
    ['metadata', 'annotations'],
    ['metadata', 'labels'],
    ['metadata'],
    ['info'],
    ['pipeline'],
    ['inventory'],
    ['status'],
  ]) {
    if (getPath(l, path) === undefined && isEmpty(getPath(m, path))) setPath(m, path, undefined);
  }

  const decisions = applyPins(local, { o, u, m }, mode, at);
  // A pinned field is a decision, never a conflict.
  const underPin = (path: string) =>
    decisions.some((d) => path === d.path || path.startsWith(`${d.path}.`) || path.startsWith(`${d.path}[`));
  const reported = conflicts.filter((c) => !underPin(c.path));

  const issuesOut: KptfileIssue[] = [];
  const mergedKf = decodeKptfileNode(parseDocument(stringify(m)).contents as never, files.local, issuesOut);
  if (issuesOut.length > 0) throw new KptfileError(issuesOut);
  if (mode === 'derived' && mergedKf.pipeline) removeSyntheticNames(mergedKf.pipeline);

  const lk = local.kptfile;
  const result: Kptfile = {};
  if (lk.apiVersion !== undefined) result.apiVersion = lk.apiVersion;
  if (lk.kind !== undefined) result.kind = lk.kind;
  const meta = {
    ...(lk.metadata?.name !== undefined ? { name: lk.metadata.name } : {}),
    ...(lk.metadata?.namespace !== undefined ? { namespace: lk.metadata.namespace } : {}),
    ...(mergedKf.metadata?.labels ? { labels: mergedKf.metadata.labels } : {}),
    ...(mergedKf.metadata?.annotations ? { annotations: mergedKf.metadata.annotations } : {}),
  };
  if (lk.metadata !== undefined || Object.keys(meta).length > 0) result.metadata = meta;
  let up = lk.upstream;
  let lock = lk.upstreamLock;
  if (options.updateUpstream) {
    if (upstream?.kptfile.upstream) up = upstream.kptfile.upstream;
    if (upstream?.kptfile.upstreamLock) lock = upstream.kptfile.upstreamLock;
  }
  if (up) result.upstream = clone(up);
  if (lock) result.upstreamLock = clone(lock);
  if (mergedKf.info) result.info = mergedKf.info;
  if (mergedKf.pipeline) result.pipeline = mergedKf.pipeline;
  if (mergedKf.inventory) result.inventory = mergedKf.inventory;
  if (mergedKf.status) result.status = mergedKf.status;

  return { kptfile: result, text: printKptfile(local, result), pipelineKey: mode, conflicts: reported, decisions };
}

const keyLabel = (key: string): string =>
  key.startsWith(SYNTHETIC_NAME_PREFIX) ? `key=${JSON.stringify(key.slice(SYNTHETIC_NAME_PREFIX.length))}` : `name=${JSON.stringify(key)}`;

/**
 * Function-level rules on top of the value merge (kpt's resource-level rules, applied to the
 * functions of a keyed pipeline list):
 * - a function local deleted and upstream left unchanged stays deleted;
 * - a function upstream deleted but local changed is kept whole, as local has it (kyaml would
 *   keep only local's changed fields, leaving a function with nothing to run);
 * - a function only local has is never dropped, even when upstream removed the whole list.
 */
function reconcileFunctions(
  list: string,
  s: { o: Plain | undefined; u: Plain | undefined; l: Plain; m: Plain },
  conflicts: Conflict[],
  at: ConflictPlace,
): void {
  const path = ['pipeline', list];
  const merged = (getPath(s.m, path) as Plain[] | undefined) ?? [];
  const out: Plain[] = [];
  for (const fn of merged) {
    const key = fn['name'] as string;
    const [of, uf, lf] = [findFn(s.o, list, key), findFn(s.u, list, key), findFn(s.l, list, key)];
    if (!lf && of && same(of, uf)) continue;
    if (lf && of && !uf && !same(lf, of)) {
      const field = `pipeline.${list}[${keyLabel(key)}]`;
      conflicts.push({
        ...at,
        path: `.${field}`,
        values: { origin: of, upstream: undefined, local: lf },
        rule: 'deleted-upstream-modified-locally',
        winner: 'local',
        message: `upstream deleted the function ${field} and local changed it; local's function is kept`,
      });
      out.push(clone(lf));
      continue;
    }
    out.push(fn);
  }
  const localFns = (getPath(s.l, path) as Plain[] | undefined) ?? [];
  localFns.forEach((lf, i) => {
    const key = lf['name'] as string;
    if (findFn(s.o, list, key) || findFn(s.u, list, key) || out.some((f) => f['name'] === key)) return;
    // Insert after the nearest earlier local function still present, else first.
    let at = 0;
    for (let j = i - 1; j >= 0; j--) {
      const prev = out.findIndex((f) => f['name'] === localFns[j]?.['name']);
      if (prev >= 0) {
        at = prev + 1;
        break;
      }
    }
    out.splice(at, 0, clone(lf));
  });
  if (out.length > 0 || getPath(s.m, path) !== undefined)
    setPath(s.m, path, out.length > 0 || merged.length > 0 ? out : getPath(s.m, path));
}

type PinStep = string | number | { readonly fn: string };

/**
 * Fields local pinned with `# kdelta:local` get local's value back, whatever the merge did, and
 * each one upstream changed is reported as a decision. Functions are addressed by their merge key.
 */
function applyPins(
  local: ParsedKptfile,
  s: { o: Plain | undefined; u: Plain | undefined; m: Plain },
  mode: PipelineKeyMode,
  at: ConflictPlace,
): Decision[] {
  if (!local.text.includes(PIN_COMMENT)) return [];
  const l = mergeable(local.kptfile, mode) ?? {};
  const pins: PinStep[][] = [];
  const visit = (node: unknown, path: PinStep[]): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = String((pair.key as { value?: unknown } | null)?.value ?? pair.key);
        const next = [...path, key];
        if (isPinnedPair(pair)) pins.push(next);
        else visit(pair.value, next);
      }
    } else if (isSeq(node)) {
      const list = path.length === 2 && path[0] === 'pipeline' ? String(path[1]) : undefined;
      node.items.forEach((item, i) => {
        const fn =
          list !== undefined && mode !== 'none' ? (getPath(l, ['pipeline', list]) as Plain[] | undefined)?.[i]?.['name'] : undefined;
        visit(item as YamlAstNode, [...path, typeof fn === 'string' ? { fn } : i]);
      });
    }
  };
  visit(local.document.contents, []);
  const decisions: Decision[] = [];
  for (const path of pins) {
    const [ov, uv, lv] = [s.o, s.u, l].map((side) => resolvePin(side, path, false)?.get());
    if (lv === undefined) continue; // not a merged section (upstream, upstreamLock, metadata.name)
    const target = resolvePin(s.m, path, true);
    if (!target) continue;
    target.set(lv);
    if (same(ov, uv)) continue;
    const field = `.${path
      .map((p) => (typeof p === 'object' ? `[${keyLabel(p.fn)}]` : typeof p === 'number' ? `[${p}]` : p))
      .join('.')
      .replace(/\.\[/g, '[')}`;
    decisions.push({
      ...at,
      path: field,
      rule: 'pinned-local',
      values: { origin: ov, upstream: uv, local: lv },
      message: `${field} is pinned (# kdelta:local): local's value kept over upstream's change`,
    });
  }
  return decisions;
}

/** The place a pin path names in a plain side: a getter and (with `create`) a setter. */
function resolvePin(root: Plain | undefined, path: readonly PinStep[], create: boolean) {
  let cur: unknown = root;
  for (const step of path.slice(0, -1)) {
    let next: unknown;
    if (typeof step === 'object') next = Array.isArray(cur) ? (cur as Plain[]).find((f) => f['name'] === step.fn) : undefined;
    else if (cur && typeof cur === 'object') {
      next = (cur as Record<string | number, unknown>)[step];
      if (next === undefined && create && typeof step === 'string' && !Array.isArray(cur)) {
        next = {};
        (cur as Plain)[step] = next;
      }
    }
    if (next === undefined || next === null || typeof next !== 'object') return undefined;
    cur = next;
  }
  const last = path[path.length - 1]!;
  if (typeof last === 'object' || cur === undefined || cur === null) return undefined;
  const holder = cur as Record<string | number, unknown>;
  return {
    get: () => holder[last],
    set: (value: unknown) => {
      holder[last] = clone(value);
    },
  };
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (Array.isArray(v)) return v.every(isEmpty);
  if (typeof v === 'object') return Object.values(v).every(isEmpty);
  return false;
}

function removeSyntheticNames(p: Pipeline): void {
  for (const list of PIPELINE_LISTS) {
    p[list]?.forEach((fn: KptFunction) => {
      if (fn.name?.startsWith(SYNTHETIC_NAME_PREFIX)) delete fn.name;
    });
  }
}

/** The local Kptfile a conflict is in. */
interface ConflictPlace {
  readonly file: string;
  readonly resource: string;
}

function kptfileIdentity(kf: Kptfile): string {
  return formatIdentity({
    group: groupOf(kf.apiVersion ?? 'kpt.dev/v1'),
    kind: kf.kind ?? 'Kptfile',
    namespace: kf.metadata?.namespace ?? '',
    name: kf.metadata?.name ?? '',
  });
}

function conflictOf(at: ConflictPlace, field: string, origin: unknown, upstream: unknown, local: unknown): Conflict {
  return {
    ...at,
    path: `.${field}`,
    values: { origin, upstream, local },
    rule: 'both-changed-upstream-wins',
    winner: 'upstream',
    message: `local and upstream both changed ${field}; upstream's value replaces local's (resource-merge)`,
  };
}

/** A conflict of the value merge, its synthetic function names shown as the keys they stand for. */
function describeCoreConflict(c: Conflict, at: ConflictPlace): Conflict {
  const shown = (text: string) => text.replace(/name="_kpt-merge_/g, 'key="');
  return { ...c, ...at, path: shown(c.path), message: shown(c.message) };
}
