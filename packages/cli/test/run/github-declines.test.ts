import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeGitHub, type FakeGitHub } from '@kdelta/fake-github';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import type { Io } from '../../src/command.js';
import { main } from '../../src/main.js';

/** People say no on GitHub: a pull request closed unmerged by a person is declined. */

let gh: FakeGitHub;
const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-ghdecline-cache-'));
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

async function fleet(): Promise<Fleet & { slug: string }> {
  const f = createFleet([]);
  fleets.push(f);
  const slug = `decline-${++org}/cluster-01`;
  await gh.createRepo(slug, { defaultBranch: 'main', files: { 'README.md': '# cluster-01\n' } });
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', `${gh.serverUrl}/${slug}.git`)].join('---\n'),
  });
  return Object.assign(f, { slug });
}

async function kdelta(f: Fleet, ...args: string[]) {
  const out = { stdout: '', stderr: '' };
  const env: Record<string, string | undefined> = {
    ...process.env,
    KDELTA_CACHE_DIR: cacheDir,
    GITHUB_TOKEN: gh.token,
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_SERVER_URL: gh.serverUrl,
  };
  for (const k of ['GH_TOKEN', 'KDELTA_GIT_TOKEN', 'GITHUB_GRAPHQL_URL']) delete env[k];
  const io: Io = { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), cwd: f.control, env };
  const code = await main(args, io);
  return { code, ...out };
}

/** A person sets the state of pull request `n` (closes it unmerged, or reopens it). */
async function personSets(slug: string, n: number, state: 'open' | 'closed'): Promise<void> {
  const res = await fetch(`${gh.apiUrl}/repos/${slug}/pulls/${n}`, {
    method: 'PATCH',
    headers: { authorization: `token ${gh.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ state }),
  });
  expect(res.status).toBe(200);
}

describe('people can say no on GitHub', () => {
  it('a pull request a person closed unmerged is declined until a new release, whose pull request names it', async () => {
    const f = await fleet();
    // no revision: the variant follows the upstream's latest release
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', '""') });
    expect((await kdelta(f, 'run', '--forge', 'github')).code).toBe(0);
    const [first] = gh.pulls(f.slug);
    expect(first?.state).toBe('open');
    await personSets(f.slug, first!.number, 'closed');

    const declined = await kdelta(f, 'run', '--forge', 'github');
    expect(declined.code).toBe(0);
    expect(declined.stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    expect(gh.pulls(f.slug)).toHaveLength(1);
    // and again: the decline holds, and costs no write
    gh.clearRequests();
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    expect(gh.writes()).toBe(0);
    expect(gh.pulls(f.slug).map((p) => p.state)).toEqual(['closed']);

    const listed = await kdelta(f, 'proposals', '--forge', 'github');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/declined\s+cluster-01\s+kdelta\/web/);
    expect(listed.stdout).toContain(
      'To undo a decline, reopen the pull request, or (when it cannot be reopened) add the label kdelta:propose-again',
    );
    expect(listed.stdout).toContain(`/${f.slug}/pull/${first!.number}`);

    // a new upstream release proposes again, in a new pull request that names the declined one
    f.publish(
      {
        'base-ns/namespace.yaml':
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  labels:\n    tier: gold\n',
      },
      'base-ns/v2',
    );
    const again = await kdelta(f, 'run', '--forge', 'github');
    expect(again.stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    const pulls = gh.pulls(f.slug);
    expect(pulls.map((p) => p.state)).toEqual(['closed', 'open']);
    expect(pulls[1]?.body).toMatch(/A previous proposal, "kdelta: add web[^"]*" \(upstream `[^`]+`, commit `[0-9a-f]{12}`\), was declined/);
  });

  it("kdelta's own closes are not declines; a reopened pull request or the label undoes a decline", async () => {
    const f = await fleet();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    await kdelta(f, 'run', '--forge', 'github');
    // the variant is gone: kdelta closes its unmerged pull request; back again, it is proposed again
    f.writeControl({ 'web.yaml': null });
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+closed/);
    expect(gh.pulls(f.slug)[0]?.body).toContain('"closedBy":"closed"');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    expect(gh.pulls(f.slug).map((p) => p.state)).toEqual(['closed', 'open']);

    // declined, then reopened: kdelta keeps it
    await personSets(f.slug, 2, 'closed');
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    await personSets(f.slug, 2, 'open');
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+unchanged/);

    // declined, then labelled to propose again: a new pull request
    await personSets(f.slug, 2, 'closed');
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    gh.addLabel(f.slug, 2, 'kdelta:propose-again');
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    expect(gh.pulls(f.slug).map((p) => p.state)).toEqual(['closed', 'closed', 'open']);
  });
});
