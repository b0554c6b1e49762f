import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeGitHub, type FakeGitHub } from '@kdelta/fake-github';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { parseMetadataBlock, run, type RunOptions } from '@kdelta/run';

/**
 * Deciding a conflict with a tick on GitHub: a reviewer ticks the box in the pull request's body
 * (as GitHub's web page does: the body saved with `[x]`, CRLF line ends), and the next run reads
 * the body the API returns.
 */

const REVIEWER = 'ghs_reviewer';
let gh: FakeGitHub;
const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-ghticks-cache-'));
beforeAll(async () => {
  gh = await startFakeGitHub({
    tokens: { ghs_fake: { login: 'kdelta-bot', permissions: 'all' }, [REVIEWER]: { login: 'reviewer', permissions: 'all' } },
  });
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
const deployment = (replicas: number, image: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: web\n        image: ${image}\n`;
const BOX = '- [ ] keep local `6` for `.spec.replicas` (apps/Deployment web)';

function opts(f: Fleet): RunOptions {
  const env: Record<string, string | undefined> = { ...process.env, KDELTA_CACHE_DIR: cacheDir };
  for (const k of ['GITHUB_TOKEN', 'GH_TOKEN', 'KDELTA_GIT_TOKEN', 'GITHUB_API_URL', 'GITHUB_SERVER_URL']) delete env[k];
  return {
    cwd: f.control,
    cacheDir,
    env,
    forge: 'github',
    github: { token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, pacing: { writeSpacing: false, retryAfterUnitMs: 20 } },
  };
}

const show = (slug: string, ref: string, path: string) =>
  execFileSync('git', ['show', `${ref}:${path}`], { cwd: gh.gitDir(slug), encoding: 'utf8' });

/** The reviewer ticks a box on the pull request's page: GitHub saves the body with it ticked. */
async function tick(slug: string, number: number, box: string): Promise<void> {
  const body = gh.pulls(slug).find((p) => p.number === number)!.body ?? '';
  expect(body).toContain(box);
  const ticked = body.replace(box, box.replace('- [ ]', '- [x]')).replace(/\r?\n/g, '\r\n');
  const res = await fetch(`${gh.apiUrl}/repos/${slug}/pulls/${number}`, {
    method: 'PATCH',
    headers: { authorization: `token ${REVIEWER}`, 'content-type': 'application/json', accept: 'application/vnd.github+json' },
    body: JSON.stringify({ body: ticked }),
  });
  expect(res.status).toBe(200);
}

describe('deciding a conflict with a tick (GitHub)', () => {
  it("a ticked box puts local's value, pinned, on the pull request's branch; merged, the next release keeps it without a conflict", async () => {
    const f = createFleet([]);
    fleets.push(f);
    const slug = `tick-${++org}/cluster-01`;
    await gh.createRepo(slug, { defaultBranch: 'main', files: { 'README.md': '# cluster-01\n' } });
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', `${gh.serverUrl}/${slug}.git`)].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01'),
    });
    f.publish({ 'base-ns/deploy.yaml': deployment(3, 'nginx:1') }, 'base-ns/v1');
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'proposed' });
    await gh.mergePull(slug, gh.pulls(slug)[0]!.number);
    await gh.humanCommit(slug, 'main', { 'web/deploy.yaml': show(slug, 'main', 'web/deploy.yaml').replace('replicas: 3', 'replicas: 6') });
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:1') }, 'base-ns/v2');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'proposed', conflictCount: 1 });
    const pull = gh.pulls(slug).find((p) => p.state === 'open')!;
    expect(show(slug, 'kdelta/web', 'web/deploy.yaml')).toContain('replicas: 4\n');

    // unticked: the rerun makes no write request
    gh.clearRequests();
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(gh.writes()).toBe(0);

    await tick(slug, pull.number, BOX);
    gh.clearRequests();
    const decided = await run(opts(f));
    expect(decided.results[0]).toMatchObject({ action: 'updated', conflictCount: 0 });
    expect(show(slug, 'kdelta/web', 'web/deploy.yaml')).toContain('replicas: 6 # kdelta:local\n');
    const body = gh.pulls(slug).find((p) => p.number === pull.number)!.body ?? '';
    expect(body).toContain('| upstream-changed | kept local (decided on this proposal) |');
    expect(body).not.toMatch(/^- \[[ xX]\]/m);
    expect(parseMetadataBlock(body)?.decided).toEqual(['keep local `6` for `.spec.replicas` (apps/Deployment web)']);

    // the tick was read once: the next run writes nothing
    gh.clearRequests();
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(gh.writes()).toBe(0);

    await gh.mergePull(slug, pull.number);
    f.publish({ 'base-ns/deploy.yaml': deployment(8, 'nginx:2') }, 'base-ns/v3');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v3') });
    expect((await run(opts(f))).results[0]).toMatchObject({ action: 'proposed', conflictCount: 0 });
    const v3 = show(slug, 'kdelta/web', 'web/deploy.yaml');
    expect(v3).toContain('replicas: 6 # kdelta:local\n');
    expect(v3).toContain('image: nginx:2');
  });

  it('a tick on a field that no longer conflicts is ignored and said so', async () => {
    const f = createFleet([]);
    fleets.push(f);
    const slug = `tick-${++org}/cluster-01`;
    await gh.createRepo(slug, { defaultBranch: 'main', files: { 'README.md': '# cluster-01\n' } });
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', `${gh.serverUrl}/${slug}.git`)].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01'),
    });
    f.publish({ 'base-ns/deploy.yaml': deployment(3, 'nginx:1') }, 'base-ns/v1');
    await run(opts(f));
    await gh.mergePull(slug, gh.pulls(slug)[0]!.number);
    await gh.humanCommit(slug, 'main', { 'web/deploy.yaml': show(slug, 'main', 'web/deploy.yaml').replace('replicas: 3', 'replicas: 6') });
    f.publish({ 'base-ns/deploy.yaml': deployment(4, 'nginx:1') }, 'base-ns/v2');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', 'v2') });
    await run(opts(f));
    const pull = gh.pulls(slug).find((p) => p.state === 'open')!;
    await tick(slug, pull.number, BOX);
    // upstream's v2 is re-released agreeing with the downstream: no conflict left to decide
    f.publish({ 'base-ns/deploy.yaml': deployment(6, 'nginx:1') }, 'base-ns/v2');
    const next = await run(opts(f));
    expect(next.results[0]).toMatchObject({ conflictCount: 0 });
    expect(next.results[0]!.message).toContain(
      'tick "keep local `6` for `.spec.replicas` (apps/Deployment web)" ignored: the field no longer conflicts as ticked',
    );
    const body = gh.pulls(slug).find((p) => p.number === pull.number)?.body ?? '';
    expect(body).toContain('- keep local `6` for `.spec.replicas` (apps/Deployment web): ignored: the field no longer conflicts as ticked');
    expect(show(slug, 'kdelta/web', 'web/deploy.yaml')).not.toContain('kdelta:local');
  });
});
