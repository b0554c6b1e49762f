#!/usr/bin/env node
// The release histories of real kpt packages replayed through `pkg get` then `pkg update`, with kpt
// and with kdelta side by side, and the results compared as data. See README.md beside this file.
//   node packages/cli/bench/histories/histories.mjs [options] <git dir>...
import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { comparePackages, describeDifference } from './compare.mjs';
import { discoverCommitPairs } from './commits.mjs';
import { discoverPairs } from './discover.mjs';
import { applyEdits, planEdits } from './edits.mjs';
import { markdownReport } from './report.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string' },
    concurrency: { type: 'string', default: '2' },
    limit: { type: 'string' },
    commits: { type: 'string' },
    filter: { type: 'string' },
    modes: { type: 'string', default: 'unedited,edited' },
    kpt: { type: 'string', default: 'kpt' },
    kdelta: { type: 'string', default: join(here, '..', '..', 'bin', 'kdelta.js') },
    timeout: { type: 'string', default: '300' },
    'keep-all': { type: 'boolean', default: false },
    summarize: { type: 'string' },
    recompare: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (opts.help) {
  process.stdout.write(
    'usage: histories.mjs [--out DIR] [--concurrency N] [--limit N] [--filter REGEX] [--modes unedited,edited] [--commits N]\n' +
      '                     [--kpt CMD] [--kdelta BIN.js] [--timeout SECONDS] [--keep-all] <git dir>... (or HISTORIES_MIRRORS)\n' +
      '       --commits N: instead of release pairs, the last N changes of each package on HEAD, each from the commit before\n' +
      '       histories.mjs --summarize DIR [--recompare]   (the report from DIR/results.jsonl; --recompare judges\n' +
      '                     the kept cases again with this comparison)\n',
  );
  process.exit(0);
}
/** A kept case judged again with this checkout's comparison (after the comparison itself changed). */
function recompare(r) {
  const [kpt, kdelta] = ['kpt', 'kdelta'].map((t) => join(r.kept ?? '', t, 'ws', 'pkg'));
  if (!r.kept || !r.kpt?.ok || !r.kdelta?.ok || !existsSync(kpt) || !existsSync(kdelta)) return;
  const compared = comparePackages(kpt, kdelta);
  Object.assign(r, {
    class: compared.differences.length === 0 ? 'agree' : 'differ',
    causes: [...new Set(compared.differences.map((d) => d.cause))].sort(),
    differences: compared.differences.slice(0, 30),
    differenceCount: compared.differences.length,
    layout: compared.layout,
    nullVsAbsent: compared.equivalent.map(describeDifference).slice(0, 10),
    comments: compared.comments.slice(0, 10),
  });
}

/** results.json and summary.md from what a run recorded in `dir`. */
function summarize(dir) {
  const meta = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
  const results = readFileSync(join(dir, 'results.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .sort((a, b) => Number.parseInt(a.id, 10) - Number.parseInt(b.id, 10) || a.id.localeCompare(b.id));
  if (opts.recompare) for (const r of results) recompare(r);
  const summary = { ...meta, finished: new Date().toISOString(), cases: results.length, results };
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(join(dir, 'summary.md'), markdownReport(summary));
  process.stdout.write(`${join(dir, 'results.json')}\n${join(dir, 'summary.md')}\n`);
}
if (opts.summarize) {
  summarize(resolve(opts.summarize));
  process.exit(0);
}

const mirrors = (positionals.length > 0 ? positionals : (process.env.HISTORIES_MIRRORS ?? '').split(/[\s,]+/).filter(Boolean)).map((m) =>
  resolve(m),
);
if (mirrors.length === 0) {
  process.stderr.write('histories: no git directory given (arguments or HISTORIES_MIRRORS)\n');
  process.exit(2);
}
const modes = opts.modes.split(',');
for (const m of modes)
  if (m !== 'unedited' && m !== 'edited') {
    process.stderr.write(`histories: unknown mode ${m} (unedited, edited)\n`);
    process.exit(2);
  }
const out = resolve(opts.out ?? mkdtempSync(join(tmpdir(), 'kdelta-histories-')));
mkdirSync(join(out, 'cases'), { recursive: true });
const work = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-histories-work-')));
const timeoutMs = Number(opts.timeout) * 1000;

const gitEnv = {
  GIT_AUTHOR_NAME: 'histories',
  GIT_AUTHOR_EMAIL: 'histories@example.com',
  GIT_COMMITTER_NAME: 'histories',
  GIT_COMMITTER_EMAIL: 'histories@example.com',
  GIT_TERMINAL_PROMPT: '0',
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: { ...process.env, ...gitEnv }, stdio: 'pipe' });

function run(cmd, args, cwd, env) {
  const t0 = performance.now();
  return new Promise((done) => {
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const ms = performance.now() - t0;
      done({ ok: !error, ms, output: `${stderr}${stdout}`.trim(), timedOut: error?.killed === true });
    });
  });
}

const tools = {
  kpt: (args) => [opts.kpt, args],
  kdelta: (args) => [process.execPath, [opts.kdelta, ...args]],
};

/**
 * `pkg get` of the older release by one tool, in a git workspace of its own, once per pair: both
 * cases of the pair start from a copy of this workspace and of the tool's cache as the get left them.
 */
async function fetchOnce(tool, pair, pairDir) {
  const base = join(pairDir, `${tool}-base`);
  const ws = join(base, 'ws');
  mkdirSync(ws, { recursive: true });
  git(ws, 'init', '--quiet');
  const env = toolEnv(join(base, 'cache'));
  const [cmd, args] = tools[tool](['pkg', 'get', `${pair.gitDir}.git/${pair.dir}@${pair.old}`, 'pkg']);
  const get = await run(cmd, args, ws, env);
  const result = { base, getMs: Math.round(get.ms) };
  if (!get.ok) return { ...result, ok: false, error: get.timedOut ? 'timed out' : get.output.slice(-800) };
  git(ws, 'add', '-A');
  git(ws, 'commit', '--quiet', '--allow-empty', '-m', 'get');
  return { ...result, ok: true };
}

const toolEnv = (cache) => ({ ...process.env, ...gitEnv, KPT_CACHE_DIR: cache, KDELTA_CACHE_DIR: cache });

/** Optional local edits, then `pkg update` to the newer release: one tool on one case. */
async function updateOnce(tool, pair, plan, fetched, caseDir) {
  const result = { ok: false, stage: 'get', getMs: fetched.getMs };
  if (!fetched.ok) return { ...result, error: fetched.error };
  const copy = join(caseDir, tool);
  execFileSync('cp', ['-a', fetched.base, copy]);
  const ws = join(copy, 'ws');
  if (plan) {
    result.edits = applyEdits(join(ws, 'pkg'), plan);
    git(ws, 'add', '-A');
    git(ws, 'commit', '--quiet', '--allow-empty', '-m', 'local edits');
  }
  result.stage = 'update';
  const [cmd, args] = tools[tool](['pkg', 'update', `pkg@${pair.new}`, '--strategy=resource-merge']);
  const update = await run(cmd, args, ws, toolEnv(join(copy, 'cache')));
  result.updateMs = Math.round(update.ms);
  if (!update.ok) return { ...result, error: update.timedOut ? 'timed out' : update.output.slice(-800) };
  return { ...result, ok: true, stage: 'done' };
}

function classify(kpt, kdelta, differences) {
  if (!kpt.ok && !kdelta.ok) return 'both-failed';
  if (!kpt.ok) return 'kpt-failed';
  if (!kdelta.ok) return 'kdelta-failed';
  return differences.length === 0 ? 'agree' : 'differ';
}

function extract(gitDir, tag, dir, into) {
  mkdirSync(into, { recursive: true });
  // a commit pair names commits by their full id, a release pair by its tag
  const rev = /^[0-9a-f]{40}$/.test(tag) ? tag : `refs/tags/${tag}`;
  const archive = execFileSync('git', ['-C', gitDir, 'archive', '--format=tar', rev, ...(dir ? [dir] : [])], {
    maxBuffer: 512 << 20,
  });
  execFileSync('tar', ['-x', '-C', into], { input: archive });
  return join(into, dir);
}

async function runPair(pair, index) {
  const pairDir = join(work, `pair-${index}`);
  mkdirSync(pairDir);
  const results = [];
  let plan;
  if (modes.includes('edited')) {
    plan = planEdits(
      extract(pair.gitDir, pair.old, pair.dir, join(pairDir, 'old')),
      extract(pair.gitDir, pair.new, pair.dir, join(pairDir, 'new')),
    );
  }
  const fetched = { kpt: await fetchOnce('kpt', pair, pairDir), kdelta: await fetchOnce('kdelta', pair, pairDir) };
  const afterGet =
    fetched.kpt.ok && fetched.kdelta.ok
      ? comparePackages(join(fetched.kpt.base, 'ws', 'pkg'), join(fetched.kdelta.base, 'ws', 'pkg')).differences.map(describeDifference)
      : [];
  for (const mode of modes) {
    const id = `${index}-${mode}`;
    const caseDir = join(pairDir, mode);
    mkdirSync(caseDir);
    const kpt = await updateOnce('kpt', pair, mode === 'edited' ? plan : undefined, fetched.kpt, caseDir);
    const kdelta = await updateOnce('kdelta', pair, mode === 'edited' ? plan : undefined, fetched.kdelta, caseDir);
    let compared = { differences: [], layout: [] };
    if (kpt.ok && kdelta.ok) compared = comparePackages(join(caseDir, 'kpt', 'ws', 'pkg'), join(caseDir, 'kdelta', 'ws', 'pkg'));
    const cls = classify(kpt, kdelta, compared.differences);
    const result = {
      id,
      repo: pair.repo,
      package: pair.key,
      dir: pair.dir,
      old: pair.old,
      new: pair.new,
      mode,
      class: cls,
      edits: kpt.edits ?? kdelta.edits ?? [],
      kpt,
      kdelta,
      causes: [...new Set(compared.differences.map((d) => d.cause))].sort(),
      differences: compared.differences.slice(0, 30),
      differenceCount: compared.differences.length,
      layout: compared.layout,
      nullVsAbsent: (compared.equivalent ?? []).map(describeDifference).slice(0, 10),
      comments: (compared.comments ?? []).slice(0, 10),
      getDiffers: afterGet.slice(0, 10),
    };
    if (cls !== 'agree' || opts['keep-all']) {
      const keep = join(out, 'cases', id);
      rmSync(keep, { recursive: true, force: true });
      renameSync(caseDir, keep);
      result.kept = keep;
      for (const t of ['kpt', 'kdelta']) rmSync(join(keep, t, 'cache'), { recursive: true, force: true });
    }
    process.stderr.write(`[${id}] ${cls.padEnd(13)} ${pair.repo} ${pair.key} ${pair.old} → ${pair.new}\n`);
    results.push(result);
  }
  rmSync(pairDir, { recursive: true, force: true });
  return results;
}

function toolVersion() {
  try {
    return execFileSync(opts.kpt, ['version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unavailable';
  }
}
function kdeltaVersion() {
  try {
    return execFileSync('git', ['-C', here, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const commitCount = opts.commits === undefined ? undefined : Number(opts.commits);
if (commitCount !== undefined && !(Number.isInteger(commitCount) && commitCount > 0)) {
  process.stderr.write(`histories: --commits takes a positive whole number, not ${opts.commits}\n`);
  process.exit(2);
}
const started = new Date();
let pairs = [];
const skipped = [];
for (const m of mirrors) {
  try {
    execFileSync('git', ['-C', m, 'rev-parse', '--git-dir'], { stdio: 'ignore' });
  } catch {
    process.stderr.write(`histories: ${m} is not a git directory\n`);
    process.exit(2);
  }
  const repoName = basename(m) === 'repo' || basename(m) === '.git' ? basename(dirname(m)) : basename(m);
  const found = opts.commits ? discoverCommitPairs(m, { repoName, count: commitCount }) : discoverPairs(m, { repoName });
  pairs.push(...found.pairs);
  skipped.push(...found.skipped.map((s) => ({ repo: repoName, ...s })));
}
if (opts.filter) {
  const re = new RegExp(opts.filter);
  pairs = pairs.filter((p) => re.test(`${p.repo} ${p.key} ${p.old} ${p.new}`));
}
// repositories take turns, so that a run cut short still samples every one of them
const byRepo = new Map();
for (const p of pairs) byRepo.set(p.repo, [...(byRepo.get(p.repo) ?? []), p]);
pairs = [];
for (let i = 0; [...byRepo.values()].some((ps) => i < ps.length); i++)
  for (const ps of byRepo.values()) if (i < ps.length) pairs.push(ps[i]);
if (opts.limit) pairs = pairs.slice(0, Number(opts.limit));
process.stderr.write(
  `histories: ${pairs.length} ${commitCount ? 'commit' : 'release'} pairs, ${pairs.length * modes.length} cases; work in ${work}, results in ${out}\n`,
);

const run_ = {
  started: started.toISOString(),
  kpt: toolVersion(),
  kdelta: kdeltaVersion(),
  mirrors,
  modes,
  ...(commitCount ? { commits: commitCount } : {}),
  pairs: pairs.length,
  packages: new Set(pairs.map((p) => `${p.repo} ${p.key}`)).size,
  skipped,
};
writeFileSync(join(out, 'run.json'), `${JSON.stringify(run_, null, 2)}\n`);
// each case is appended as it ends: `--summarize <out>` reports on a run that was cut short
writeFileSync(join(out, 'results.jsonl'), '');
const record = (r) => appendFileSync(join(out, 'results.jsonl'), `${JSON.stringify(r)}\n`);

let next = 0;
async function worker() {
  while (next < pairs.length) {
    const i = next++;
    try {
      for (const r of await runPair(pairs[i], i)) record(r);
    } catch (error) {
      record({ id: `${i}`, ...pairs[i], package: pairs[i].key, class: 'harness-error', error: String(error?.stack ?? error) });
      process.stderr.write(`[${i}] harness error: ${error}\n`);
    }
  }
}
await Promise.all(Array.from({ length: Math.max(1, Number(opts.concurrency)) }, worker));
rmSync(work, { recursive: true, force: true });
summarize(out);
