import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFakeGitHub, type FakeGitHub } from '@kdelta/fake-github';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { getPackageFiles, type Materialize, run, type RunOptions } from '@kdelta/run';

/**
 * `kdelta run --forge github` against GitHub as it really behaves (issue: GitHub at organisation
 * scale): private upstreams on the same server, auto-merge on a clean pull request, statuses on
 * the pushed commit, refused tokens, concurrent runs.
 */

const copyMaterialize: Materialize = async (input) => {
  const files = await getPackageFiles(input);
  return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
};

let gh: FakeGitHub;
const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-ghb-cache-'));
beforeAll(async () => {
  gh = await startFakeGitHub();
});
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(async () => {
  expect(gh.violations).toEqual([]);
  await gh.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

let org = 0;

type GhFleet = Fleet & { owner: string; slug(d: string): string; pushUpstream(): Promise<void> };

/**
 * Downstream repositories on the fake GitHub; the upstream on disk, or (`privateUpstream`) on the
 * fake GitHub too, where every read needs a token.
 */
async function fleet(downstreams: string[], options: { privateUpstream?: boolean } = {}): Promise<GhFleet> {
  const f = createFleet([]);
  fleets.push(f);
  const owner = `org-${++org}`;
  for (const d of downstreams) await gh.createRepo(`${owner}/${d}`, { defaultBranch: 'main', files: { 'README.md': `# ${d}\n` } });
  let upstream = f.upstream;
  const pushUpstream = async () => {
    const header = `Authorization: Basic ${Buffer.from(`x-access-token:${gh.token}`).toString('base64')}`;
    await promisify(execFile)(
      'git',
      ['-c', `http.extraHeader=${header}`, 'push', '--quiet', '--force', upstream, 'refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*'],
      { cwd: f.upstream },
    );
  };
  if (options.privateUpstream) {
    await gh.createRepo(`${owner}/catalog`, { defaultBranch: 'side' });
    upstream = `${gh.serverUrl}/${owner}/catalog.git`;
    await pushUpstream();
  }
  f.writeControl({
    'repositories.yaml': [
      repository('catalog', upstream),
      ...downstreams.map((d) => repository(d, `${gh.serverUrl}/${owner}/${d}.git`, { env: 'prod' })),
    ].join('---\n'),
  });
  return Object.assign(f, { owner, slug: (d: string) => `${owner}/${d}`, pushUpstream });
}

function cleanEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, KDELTA_CACHE_DIR: cacheDir, ...extra };
  for (const k of ['GITHUB_TOKEN', 'GH_TOKEN', 'KDELTA_GIT_TOKEN', 'GITHUB_API_URL', 'GITHUB_SERVER_URL', 'GITHUB_GRAPHQL_URL'])
    if (!(k in extra)) delete env[k];
  return env;
}

function opts(f: Fleet, github: RunOptions['github'] = {}, extra: Partial<RunOptions> = {}): RunOptions {
  return {
    cwd: f.control,
    cacheDir,
    env: cleanEnv(),
    forge: 'github',
    materialize: copyMaterialize,
    github: {
      token: gh.token,
      apiUrl: gh.apiUrl,
      serverUrl: gh.serverUrl,
      pacing: { writeSpacing: false, retryAfterUnitMs: 20 },
      ...github,
    },
    ...extra,
  };
}

describe('kdelta run --forge github, as GitHub behaves', () => {
  it('a private upstream on the same server is listed and fetched with the run token', async () => {
    const f = await fleet(['cluster-01'], { privateUpstream: true });
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    // the real 3-way update: the package is fetched from the upstream on the fake GitHub
    const report = await run(opts(f, {}, { materialize: undefined }));
    expect(report.results[0]?.error).toBeUndefined();
    expect(report.results[0]?.action).toBe('proposed');
    const [pull] = gh.pulls(f.slug('cluster-01'));
    expect(pull?.state).toBe('open');
  });
});
