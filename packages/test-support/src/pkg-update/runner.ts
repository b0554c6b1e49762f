// The pkg-update conformance runner: reads the scenario YAML (fixtures/pkg-update, its README says
// the format), builds the scenarios' real local git repositories, and compares package trees.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addMergeComments } from '@kdelta/kptfile-model';
import { parse, parseAllDocuments, stringify } from 'yaml';

// the same from src/ (tests) and dist/ (built)
export const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'pkg-update');
const datasets = join(fixtures, 'datasets');

// scenario data is untyped YAML
export type Any = any;

export interface ScenarioFile {
  readonly file: string;
  readonly kind: 'git' | 'threeWay' | 'argParse';
  readonly scenarios: Any[];
}

export function loadScenarioFiles(): ScenarioFile[] {
  const dir = join(fixtures, 'scenarios');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const d = parse(readFileSync(join(dir, f), 'utf8')) as Any;
      return { file: f, kind: d.kind, scenarios: d.scenarios };
    });
}

const gitEnv = { GIT_AUTHOR_NAME: 'Kpt', GIT_AUTHOR_EMAIL: 'kpt@kpt.dev', GIT_COMMITTER_NAME: 'Kpt', GIT_COMMITTER_EMAIL: 'kpt@kpt.dev' };
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...gitEnv }, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Placeholder substitution over any value. */
export class Vars {
  readonly repos = new Map<string, string>();
  readonly commits = new Map<string, string[]>();
  workspace = '';
  otherDir = '';
  cwd = '';
  sub(value: Any): Any {
    if (typeof value === 'string') {
      return value.replace(/\{\{([a-zA-Z]+)(?::([^}:]+))?(?::(\d+))?\}\}/g, (m, key: string, name?: string, n?: string) => {
        switch (key) {
          case 'repo':
            return this.repo(name!);
          case 'repoName':
            return basename(this.repo(name!));
          case 'commit': {
            const c = this.commits.get(name!)?.[Number(n)];
            if (!c) throw new Error(`no commit ${name}:${n} yet`);
            return c;
          }
          case 'workspace':
            return this.workspace;
          case 'otherDir':
            return this.otherDir;
          case 'otherDirName':
            return basename(this.otherDir);
          case 'cwd':
            return this.cwd;
          default:
            return m;
        }
      });
    }
    if (Array.isArray(value)) return value.map((v) => this.sub(v));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.sub(v)]));
    return value;
  }
  repo(name: string): string {
    const r = this.repos.get(name);
    if (!r) throw new Error(`unknown repo ${name}`);
    return r;
  }
}

// ---------- package specs ----------

const kptfileOrder = ['upstream', 'upstreamLock', 'info', 'pipeline', 'inventory', 'status'];

function dropEmpty(v: Any): Any {
  if (Array.isArray(v)) return v.map(dropEmpty);
  if (v && typeof v === 'object') {
    const out: Any = {};
    for (const [k, x] of Object.entries(v)) if (x !== '' && x !== undefined) out[k] = dropEmpty(x);
    return out;
  }
  return v;
}

export function renderKptfile(name: string, body: Any): string {
  const doc: Any = { apiVersion: 'kpt.dev/v1', kind: 'Kptfile', metadata: { name } };
  for (const k of kptfileOrder) if (body?.[k] !== undefined) doc[k] = dropEmpty(body[k]);
  return stringify(doc);
}

function setPath(obj: Any, path: (string | number)[], value: Any): void {
  let cur = obj;
  for (const k of path.slice(0, -1)) cur = cur[k];
  cur[path[path.length - 1]!] = value;
}

export function renderSpec(dir: string, root: string, spec: Any): void {
  mkdirSync(dir, { recursive: true });
  if (spec.kptfile !== undefined && spec.kptfile !== null) writeFileSync(join(dir, 'Kptfile'), renderKptfile(root, spec.kptfile));
  for (const r of spec.resources ?? []) {
    const name = typeof r === 'string' ? r : r.resource;
    const text = readFileSync(join(datasets, 'pkgbuilder', `${name}.yaml`), 'utf8');
    let out = text;
    if (typeof r !== 'string' && (r.set || r.annotations)) {
      const doc = parse(text) as Any;
      for (const s of r.set ?? []) setPath(doc, s.path, s.value);
      if (r.annotations) doc.metadata.annotations = { ...(doc.metadata.annotations ?? {}), ...r.annotations };
      out = stringify(doc);
    }
    writeFileSync(join(dir, `${name}.yaml`), out);
  }
  for (const [f, content] of Object.entries(spec.files ?? {})) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), String(content));
  }
  for (const sub of spec.subpackages ?? []) renderSpec(join(dir, sub.name), sub.name, sub);
}

/** A source tree (dataset or spec) materialised in a scratch directory. */
export function sourceTree(vars: Vars, src: Any, root: string, scratch: string): string {
  const dir = mkdtempSync(join(scratch, 'src-'));
  if (src.dataset) cpSync(join(datasets, src.dataset), dir, { recursive: true, verbatimSymlinks: true });
  else if (src.pkg) renderSpec(dir, root, vars.sub(src.pkg));
  else if (src.pkgSpec) renderSpec(dir, root, vars.sub(src.pkgSpec));
  return dir;
}

// ---------- kpt's ReplaceData ----------

function mergeKptfileForReplace(srcText: string, existingText: string): string {
  const src = (parse(srcText) ?? {}) as Any;
  const ex = (parse(existingText) ?? {}) as Any;
  const emptyish = (v: Any) => v === undefined || v === null || (typeof v === 'object' && Object.keys(v).length === 0);
  if (emptyish(src.upstream) && !emptyish(ex.upstream)) src.upstream = ex.upstream;
  if (emptyish(src.upstreamLock) && !emptyish(ex.upstreamLock)) src.upstreamLock = ex.upstreamLock;
  src.metadata = { ...(src.metadata ?? {}), name: ex.metadata?.name };
  if (ex.metadata?.name === undefined) delete src.metadata.name;
  const out: Any = {};
  for (const k of ['apiVersion', 'kind', 'metadata', ...kptfileOrder]) if (src[k] !== undefined) out[k] = src[k];
  for (const [k, v] of Object.entries(src)) if (!(k in out)) out[k] = v;
  return stringify(out);
}

export function replaceData(repoDir: string, src: string): void {
  const walk = (rel: string) => {
    for (const e of readdirSync(join(src, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const from = join(src, r);
      const to = join(repoDir, r);
      if (e.isSymbolicLink()) {
        if (!existsSync(to)) symlinkSync(readlinkSafe(from), to);
      } else if (e.isDirectory()) {
        mkdirSync(to, { recursive: true });
        walk(r);
      } else if (e.name === 'Kptfile' && existsSync(to)) {
        writeFileSync(to, mergeKptfileForReplace(readFileSync(from, 'utf8'), readFileSync(to, 'utf8')));
      } else {
        writeFileSync(to, readFileSync(from));
      }
    }
  };
  walk('');
  const prune = (rel: string) => {
    for (const e of readdirSync(join(repoDir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === '.git' || r === 'Kptfile') continue;
      let inSrc = true;
      try {
        lstatSync(join(src, r));
      } catch {
        inSrc = false;
      }
      if (!inSrc) rmSync(join(repoDir, r), { recursive: true, force: true });
      else if (e.isDirectory()) prune(r);
    }
  };
  prune('');
}

function readlinkSafe(p: string): string {
  return execFileSync('readlink', [p], { encoding: 'utf8' }).trim();
}

// ---------- comparison ----------

function walkTree(root: string): Map<string, 'dir' | 'file'> {
  const out = new Map<string, 'dir' | 'file'>();
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (r.includes('.git')) continue;
      if (e.isDirectory()) {
        out.set(r, 'dir');
        walk(r);
      } else out.set(r, 'file');
    }
  };
  walk('');
  return out;
}

/** JSON with mapping keys sorted: data equality with key order ignored, sequence order kept. */
function canonical(v: Any): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

function yamlData(text: string): Any {
  const docs = parseAllDocuments(text) as Any[];
  return docs.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
}

/** Apply the merge-comment transform to every resource file of a golden tree (skipped if any fails to parse). */
export function mergeCommentTransform(dir: string): void {
  const files = [...walkTree(dir)].filter(([p, k]) => k === 'file' && /\.ya?ml$/.test(p)).map(([p]) => p);
  const texts = files.map((p) => readFileSync(join(dir, p), 'utf8'));
  if (texts.some((t) => (parseAllDocuments(t) as Any[]).some((d) => d.errors.length > 0))) return;
  files.forEach((p, i) => writeFileSync(join(dir, p), addMergeComments(texts[i]!)));
}

/** Differences between a golden tree and an actual one, per the README's comparison rules. */
export function compareTrees(expected: string, actual: string, kptfiles: 'ignore-root' | 'semantic' | undefined): string[] {
  const problems: string[] = [];
  const e = walkTree(expected);
  const a = walkTree(actual);
  if (kptfiles === 'ignore-root') {
    e.delete('Kptfile');
    a.delete('Kptfile');
  }
  for (const p of e.keys()) if (!a.has(p)) problems.push(`missing ${p}`);
  for (const p of a.keys()) if (!e.has(p)) problems.push(`unexpected ${p}`);
  for (const [p, kind] of e) {
    if (kind !== 'file' || a.get(p) !== 'file') continue;
    const x = readFileSync(join(expected, p), 'utf8');
    const y = readFileSync(join(actual, p), 'utf8');
    const base = basename(p);
    if (base === 'Kptfile') {
      // Kptfiles are compared as data (kpt's own serializer's bytes are not reproduced)
      if (canonical(parse(x)) !== canonical(parse(y))) problems.push(`Kptfile ${p} differs:\n--- expected\n${x}\n--- actual\n${y}`);
    } else if (/\.ya?ml$/.test(base)) {
      let same: boolean;
      try {
        same = canonical(yamlData(x)) === canonical(yamlData(y));
      } catch {
        same = x.trim() === y.trim();
      }
      if (!same) problems.push(`${p} differs:\n--- expected\n${x}\n--- actual\n${y}`);
    } else if (x.trim() !== y.trim()) problems.push(`${p} differs: ${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
  }
  return problems;
}
