import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '@kdelta/fake-github';
import { readTree, tempDir } from '@kdelta/test-support';
import { run } from '@kdelta/run';
import { createFleet, packageVariant, repository, runMain, type Fleet } from './__fixtures__/fleet.js';

// `mode: preview` on a pull request of the upstream repository, against a fake GitHub: the
// upstream (org/catalog) and three downstreams live there; the control repository is the
// workspace. The preview comments once on the pull request, updates that comment on the next
// push, writes nothing else, and says what a real run proposes once the change is released.

const DOWNSTREAMS = ['cluster-01', 'cluster-02', 'cluster-03'] as const;

const namespace = (tier: string, note = '') =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace${note}\n  labels:\n    tier: ${tier}\n`;

function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
}

async function api(gh: FakeGitHub, method: string, path: string, body?: unknown): Promise<{ number: number }> {
  const res = await fetch(`${gh.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${gh.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as { number: number };
}

interface Setup {
  readonly gh: FakeGitHub;
  readonly f: Fleet;
  readonly env: Record<string, string>;
  readonly github: {
    token: string;
    apiUrl: string;
    serverUrl: string;
    graphqlUrl: string;
    pacing: { readonly writeSpacing: false; readonly retryAfterUnitMs: number };
  };
}

/**
 * Variants a, b, c of org/catalog's base-ns at v2, proposed and merged into org/cluster-01..03;
 * a and b then edited downstream (label tier), c with a pipeline function that refuses "gold".
 */
async function fleet(): Promise<Setup> {
  const gh = await startFakeGitHub({
    tokens: {
      ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
      // what a preview's token needs on the downstreams: to read them
      ghs_reader: { login: 'reader', permissions: { contents: 'read', pull_requests: 'read', metadata: 'read' } },
    },
  });
  onTestFinished(() => gh.close());
  const f = createFleet([]);
  onTestFinished(() => f.cleanup());
  f.publish({ 'base-ns/namespace.yaml': namespace('bronze') }, 'base-ns/v2');
  // the repository under review: its pull request gets the comment
  await gh.createRepo('org/catalog', { defaultBranch: 'main', files: { 'README.md': '# catalog\n' } });
  const urls: string[] = [];
  for (const d of DOWNSTREAMS)
    urls.push((await gh.createRepo(`org/${d}`, { defaultBranch: 'main', files: { 'README.md': `# ${d}\n` } })).cloneUrl);
  const fn = join(tempDir('kdelta-preview-fn-'), 'tier-check.sh');
  writeFileSync(
    fn,
    '#!/bin/sh\ninput=$(cat)\ncase "$input" in *"tier: gold"*) echo "gold is not a tier of this cluster" >&2; exit 1;; esac\nprintf "%s\\n" "$input"\n',
    { mode: 0o755 },
  );
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), ...DOWNSTREAMS.map((d, i) => repository(d, urls[i]!))].join('---\n'),
    'a.yaml': packageVariant('a', 'cluster-01', '', 'v2'),
    'b.yaml': packageVariant('b', 'cluster-02', '', 'v2'),
    'c.yaml': packageVariant('c', 'cluster-03', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`, 'v2'),
  });
  // GitHub's pacing of writes (a second apart) is the Action's own test's business, not this one's
  const pacing = { writeSpacing: false, retryAfterUnitMs: 20 } as const;
  const github = { token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, graphqlUrl: gh.graphqlUrl, pacing };
  const env = { GITHUB_API_URL: gh.apiUrl, GITHUB_SERVER_URL: gh.serverUrl, GITHUB_GRAPHQL_URL: gh.graphqlUrl };
  const first = await run({ cwd: f.control, forge: 'github', github, allowExec: true, env: { ...process.env, ...env } });
  expect(first.results.map((r) => [r.variant, r.action, r.renderFailure])).toEqual([
    ['a', 'proposed', undefined],
    ['b', 'proposed', undefined],
    ['c', 'proposed', undefined],
  ]);
  for (const d of DOWNSTREAMS) await gh.mergePull(`org/${d}`, gh.pulls(`org/${d}`)[0]!.number);
  for (const [d, v, tier] of [
    ['cluster-01', 'a', 'silver'],
    ['cluster-02', 'b', 'iron'],
  ] as const) {
    const text = gitIn(gh.gitDir(`org/${d}`), 'show', `main:${v}/namespace.yaml`);
    await gh.humanCommit(`org/${d}`, 'main', { [`${v}/namespace.yaml`]: `${text.replace('tier: bronze', `tier: ${tier}`)}\n` });
  }
  return { gh, f, env, github };
}

/** Every ref of every repository and every file of the control repository. */
function snapshot(s: Setup): unknown {
  const refs = (dir: string) => gitIn(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
  return {
    onGitHub: ['org/catalog', ...DOWNSTREAMS.map((d) => `org/${d}`)].map((r) => refs(s.gh.gitDir(r))),
    upstream: refs(s.f.upstream),
    control: readTree(s.f.control),
  };
}

/**
 * A push to the pull request's branch `next`: the upstream's package changes (the tier is gold),
 * on the upstream and on the reviewed repository. Returns both head commits.
 */
async function pushNext(s: Setup, note: string): Promise<{ upstream: string; reviewed: string }> {
  gitIn(s.f.upstream, 'checkout', '--quiet', '-B', 'next', 'main');
  const upstream = s.f.publish({ 'base-ns/namespace.yaml': namespace('gold', note) });
  gitIn(s.f.upstream, 'checkout', '--quiet', 'main');
  const reviewed = await s.gh.humanCommit('org/catalog', 'next', { 'base-ns/namespace.yaml': namespace('gold', note) });
  return { upstream, reviewed };
}

/** The runner's event for a push to pull request `number` of org/catalog. */
function pullRequestEvent(number: number, headSha: string): Record<string, string> {
  const file = join(tempDir('kdelta-event-'), 'event.json');
  writeFileSync(file, JSON.stringify({ action: 'synchronize', pull_request: { number, head: { sha: headSha, ref: 'next' } } }));
  return { GITHUB_EVENT_NAME: 'pull_request', GITHUB_REPOSITORY: 'org/catalog', GITHUB_EVENT_PATH: file };
}

describe('the Action previews a pull request of the upstream', () => {
  it('comments once what every downstream would get, updates that comment on the next push, writes nothing else', async () => {
    const s = await fleet();
    const { gh } = s;
    const head1 = await pushNext(s, '');
    const pr = await api(gh, 'POST', '/repos/org/catalog/pulls', { title: 'tier gold', head: 'next', base: 'main' });
    const before = snapshot(s);
    gh.clearRequests();

    // no mode: a pull_request event previews; the pull request is of the upstream's mirror on GitHub
    // the downstreams read with a read-only token; the comment with one that may write pull requests
    const inputs = { token: 'ghs_reader', 'comment-token': gh.token, 'allow-exec': 'true', upstream: 'catalog', 'upstream-ref': 'next' };
    const first = await runMain(s.f.control, inputs, { ...s.env, ...pullRequestEvent(pr.number, head1.reviewed) });
    expect(first.stdout).not.toContain('::error');
    expect(first.status).toBe(0);
    expect(gh.requests.filter((r) => r.write).map((r) => r.operationId)).toEqual(['issues/create-comment']);
    expect(snapshot(s)).toEqual(before);
    const comments = gh.comments('org/catalog', pr.number);
    expect(comments).toHaveLength(1);
    const body = comments[0]!.body;
    expect(
      body.startsWith(
        `<!-- kdelta-preview: workspace .kdelta -->\n## kdelta preview: upstream \`catalog\` at \`next\` (\`${head1.upstream.slice(0, 12)}\`)`,
      ),
    ).toBe(true);
    expect(body).toContain(
      '**conflicts in 2 of 3 downstreams; the most common fields: `.metadata.labels.tier` (2); render fails in 1 (function `',
    );
    expect(body).toContain('gold is not a tier of this cluster); 3 changed; 0 unchanged.**');
    expect(first.summary).toContain('conflicts in 2 of 3 downstreams');
    expect(first.outputs).toMatchObject({ conflicts: '2', 'render-failed': '1', failed: '0' });
    expect(first.outputs['comment-url']).toContain(`/org/catalog/pull/${pr.number}#issuecomment-${comments[0]!.id}`);

    // a second push to the pull request: the same comment, brought up to date
    const head2 = await pushNext(s, ' (v3)');
    const pushed = snapshot(s);
    gh.clearRequests();
    const second = await runMain(s.f.control, inputs, { ...s.env, ...pullRequestEvent(pr.number, head2.reviewed) });
    expect(second.status).toBe(0);
    expect(gh.requests.filter((r) => r.write).map((r) => r.operationId)).toEqual(['issues/update-comment']);
    const after = gh.comments('org/catalog', pr.number);
    expect(after.map((c) => c.id)).toEqual([comments[0]!.id]);
    expect(after[0]!.body).toContain(`\`${head2.upstream.slice(0, 12)}\``);
    expect(snapshot(s)).toEqual(pushed);
    expect(gh.violations).toEqual([]);

    // released as v3 and followed by the control resources: the run proposes what the preview said
    gitIn(s.f.upstream, 'tag', 'base-ns/v3', head2.upstream);
    const control = readTree(join(s.f.control, '.kdelta'));
    s.f.writeControl(
      Object.fromEntries(['a.yaml', 'b.yaml', 'c.yaml'].map((k) => [k, control[k]!.replace('revision: v2', 'revision: v3')])),
    );
    const real = await run({ cwd: s.f.control, forge: 'github', github: s.github, allowExec: true, env: { ...process.env, ...s.env } });
    expect(real.results.map((r) => [r.variant, r.action, r.conflicts.map((c) => c.path), r.renderFailure?.results])).toEqual([
      ['a', 'proposed', ['.metadata.labels.tier'], undefined],
      ['b', 'proposed', ['.metadata.labels.tier'], undefined],
      ['c', 'proposed', [], ['gold is not a tier of this cluster']],
    ]);
    const previewed = after[0]!.body;
    for (const r of real.results) {
      for (const c of r.conflicts)
        expect(previewed).toContain(
          `| ${c.resource} | \`${c.path}\` | \`${String(c.values.origin)}\` | \`${String(c.values.upstream)}\` | \`${String(c.values.local)}\` | ${c.rule} | ${c.winner} |`,
        );
    }
    expect(previewed).toMatch(/<b>c<\/b> → cluster-03\/c: changed, \d+ files?, render failed: function /);
  });
});
