#!/usr/bin/env node
// Writes openapi/subset.json: the operations the fake GitHub serves, taken from GitHub's official OpenAPI
// description (the npm package @octokit/openapi, api.github.com), with every component they reach and nothing
// else. The full description is ~30 MB packed, so it is fetched with `npm pack` into a temp directory rather
// than installed as a dependency of the workspace. Run: node scripts/trim-openapi.mjs [version]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSION = process.argv[2] ?? '23.0.2';

/** The operations the fake serves (operationId). */
export const OPERATIONS = [
  'repos/get',
  'repos/get-branch',
  'repos/create-commit-status',
  'repos/get-combined-status-for-ref',
  'repos/list-commit-statuses-for-ref',
  'checks/create',
  'checks/list-for-ref',
  'pulls/list',
  'pulls/create',
  'pulls/get',
  'pulls/update',
  'pulls/list-commits',
  'pulls/request-reviewers',
  'pulls/remove-requested-reviewers',
  'issues/add-labels',
  'issues/remove-label',
  'issues/add-assignees',
  'issues/remove-assignees',
  'issues/list-comments',
  'issues/create-comment',
  'issues/update-comment',
  'issues/list-for-repo',
  'issues/create',
  'issues/get',
  'issues/update',
  'git/create-blob',
  'git/create-tree',
  'git/create-commit',
  'git/get-ref',
  'git/create-ref',
  'git/update-ref',
  'git/delete-ref',
  'pulls/merge',
  'apps/get-repo-installation',
  'apps/create-installation-access-token',
  'users/get-authenticated',
];

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'openapi', 'subset.json');

const work = mkdtempSync(join(tmpdir(), 'kdelta-openapi-'));
try {
  const tgz = execFileSync('npm', ['pack', `@octokit/openapi@${VERSION}`, '--silent'], { cwd: work, encoding: 'utf8' }).trim();
  execFileSync('tar', ['xzf', tgz, 'package/generated/api.github.com.json'], { cwd: work });
  const full = JSON.parse(readFileSync(join(work, 'package/generated/api.github.com.json'), 'utf8'));
  writeFileSync(out, JSON.stringify(trim(full, VERSION), null, 2) + '\n');
  // The workspace's formatter checks JSON too; leave the fixture as it would.
  execFileSync('npx', ['biome', 'format', '--write', out], { cwd: join(here, '..'), stdio: 'inherit' });
  console.log(`wrote ${out}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

function trim(full, version) {
  const paths = {};
  const found = new Set();
  for (const [path, item] of Object.entries(full.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!OPERATIONS.includes(op?.operationId)) continue;
      found.add(op.operationId);
      paths[path] ??= {};
      paths[path][method] = strip(op);
    }
  }
  const missing = OPERATIONS.filter((id) => !found.has(id));
  if (missing.length) throw new Error(`operations not in @octokit/openapi@${version}: ${missing.join(', ')}`);

  // Follow every $ref from the kept operations, transitively, and keep only those components.
  const components = {};
  const queue = [paths];
  const seen = new Set();
  while (queue.length) {
    const node = queue.pop();
    for (const ref of refsIn(node)) {
      if (seen.has(ref)) continue;
      seen.add(ref);
      const [, , kind, name] = ref.split('/');
      const target = full.components[kind][name];
      if (!target) throw new Error(`unresolved ${ref}`);
      components[kind] ??= {};
      components[kind][name] = strip(target);
      queue.push(components[kind][name]);
    }
  }
  for (const kind of Object.keys(components)) components[kind] = Object.fromEntries(Object.entries(components[kind]).sort());
  return {
    openapi: full.openapi,
    info: { title: full.info.title, version: full.info.version, 'x-source': `@octokit/openapi@${version} generated/api.github.com.json` },
    paths,
    components,
  };
}

function refsIn(node, acc = []) {
  if (Array.isArray(node)) for (const v of node) refsIn(v, acc);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') acc.push(v);
      else refsIn(v, acc);
    }
  }
  return acc;
}

/** Drops prose and examples (most of the size); a key under `properties` is a field name and always kept. */
function strip(node, parentKey = '') {
  if (Array.isArray(node)) return node.map((v) => strip(v));
  if (!node || typeof node !== 'object') return node;
  const outNode = {};
  for (const [k, v] of Object.entries(node)) {
    if (parentKey !== 'properties') {
      if ((k === 'description' || k === 'summary') && typeof v === 'string') continue;
      if (k === 'example' || k === 'examples' || k === 'externalDocs' || k === 'x-github' || k === 'tags') continue;
    }
    outNode[k] = strip(v, k);
  }
  return outNode;
}
