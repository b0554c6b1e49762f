import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleet, git, gitEnv, packageVariant, repository, tempDir } from '@kdelta/test-support';
import { preview } from '../preview/preview.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Forge } from '../forges/forge.js';
import type { Plan } from '../plan/plan.js';
import { run } from '../run.js';
import { NO_POLICIES, type UpdatePolicy } from './policy.js';
import { planPolicies, type PolicyPlanInput } from './policy-plan.js';

// What the policies cost a run: nothing for a fleet without them or a variant none selects, and
// for a governed fleet with nothing new, no clone and no request besides the run's own ls-remotes.

const DAY = 86_400_000;

/** A context whose every read fails the test: what a plan that must read nothing is given. */
const untouchable: PolicyPlanInput['ctx'] = {
  version: '1.0.0',
  env: {},
  upstreamRefs: () => Promise.reject(new Error('read the upstream')),
  heads: () => Promise.reject(new Error('read a downstream')),
  mirror: () => Promise.reject(new Error('cloned')),
  // any request to the forge (a health signal, a proposal) fails the test
  forge: new Proxy({ name: 'untouchable' } as Forge, {
    get: (target, key) =>
      key in target ? target[key as keyof Forge] : () => Promise.reject(new Error(`asked the forge (${String(key)})`)),
  }),
};

function policyOn(variants: readonly string[]): UpdatePolicy {
  return {
    name: 'platform',
    source: { file: 'policy.yaml', document: 1, kind: 'UpdatePolicy', name: 'platform' },
    selector: { packageVariants: variants },
    updateTypes: new Set(['patch', 'minor', 'major']),
    ignore: [],
    minimumReleaseAgeMs: 0,
    separateMajor: true,
    freezes: [],
    limits: {},
    group: 'none',
  };
}

describe('planPolicies costs nothing where no policy governs', () => {
  const plan = { variants: [], downstreams: [], warnings: [] } as Plan;
  it.each([
    ['no UpdatePolicy', []],
    ['a policy that selects no variant', [policyOn(['nothing-*'])]],
  ] as const)('%s: the empty plan, nothing read', async (_name, policies) => {
    const decided = await planPolicies({ plan, policies, ctx: untouchable, now: new Date(), concurrency: 2 });
    expect(decided).toBe(NO_POLICIES);
  });
});

describe('a governed fleet with nothing new', () => {
  it('clones nothing and asks each repository for its refs once: the downstream states and release dates are kept by commit', async () => {
    const f = createFleet(['cluster-01', 'cluster-02']);
    onTestFinished(() => f.cleanup());
    // base-ns released as semantic versions: v1.0.0 ten days ago, v1.1.0 now
    execFileSync('git', ['tag', '-d', 'base-ns/v1'], { cwd: f.upstream });
    const old = new Date(Date.now() - 10 * DAY).toISOString();
    execFileSync('git', ['commit', '--quiet', '--allow-empty', '-m', 'v1.0.0'], {
      cwd: f.upstream,
      env: { ...gitEnv, GIT_COMMITTER_DATE: old, GIT_AUTHOR_DATE: old },
    });
    execFileSync('git', ['tag', 'base-ns/v1.0.0'], { cwd: f.upstream });
    f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fresh\n' }, 'base-ns/v1.1.0');
    const follower = (name: string, downstream: string) =>
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n  downstream:\n    repo: ${downstream}\n    package: ${name}\n`;
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('cluster-01', f.downstream('cluster-01'), { 'kdelta.dev/wave': 'canary' }),
        repository('cluster-02', f.downstream('cluster-02')),
      ].join('---\n'),
      'web.yaml': follower('web', 'cluster-01'),
      'api.yaml': follower('api', 'cluster-02'),
      'policy.yaml':
        'apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n  minimumReleaseAge: 3d\n  rollout:\n    waves: [canary, prod]\n',
    });
    const cacheDir = tempDir();
    const env = { ...process.env, KDELTA_CACHE_DIR: cacheDir, ...gitEnv };
    const first = await run({ cwd: f.control, mode: 'variants', cacheDir, env });
    // v1.1.0 is too young: v1.0.0 is proposed, to the canary first (api's cluster is in the last wave)
    expect(first.results.map((r) => [r.variant, r.action, r.heldBy ?? r.upstream?.ref])).toEqual([
      ['api', 'deferred', 'rollout-wave'],
      ['web', 'proposed', 'base-ns/v1.0.0'],
    ]);
    expect(first.results[1]!.upstream!.reason).toContain('v1.1.0 is less than a minute old, policy platform asks 3d');

    const trace = join(tempDir(), 'trace');
    const before = process.env.GIT_TRACE;
    process.env.GIT_TRACE = trace;
    try {
      const second = await run({ cwd: f.control, mode: 'variants', cacheDir, env: { ...env, GIT_TRACE: trace } });
      expect(second.results.map((r) => r.action)).toEqual(['deferred', 'unchanged']);
    } finally {
      if (before === undefined) delete process.env.GIT_TRACE;
      else process.env.GIT_TRACE = before;
    }
    const commands = [...readFileSync(trace, 'utf8').matchAll(/built-in: git (\S+)/g)].map((m) => m[1]);
    expect(commands).not.toContain('clone');
    expect(commands).not.toContain('cat-file');
    // at most one look-up per repository, as without a policy (none when their refs are read from their files)
    expect(commands.filter((c) => c === 'ls-remote').length).toBeLessThanOrEqual(3);
  });
});

describe('a preview of an upstream ref', () => {
  it('proposes the ref under review to a governed variant, not the revision its policy would choose', async () => {
    const f = createFleet(['cluster-01']);
    onTestFinished(() => f.cleanup());
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', f.downstream('cluster-01'))].join('---\n'),
      'web.yaml': packageVariant('web', 'cluster-01', '', 'main'),
      'policy.yaml': 'apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n  updateTypes: [patch]\n',
    });
    const cacheDir = tempDir();
    const options = { cwd: f.control, mode: 'variants' as const, cacheDir, env: { ...process.env, KDELTA_CACHE_DIR: cacheDir, ...gitEnv } };
    expect((await run(options)).results.map((r) => r.action)).toEqual(['proposed']);
    git(f.downstream('cluster-01'), 'update-ref', 'refs/heads/main', 'refs/heads/kdelta/web');
    // the change under review: a branch of the upstream
    git(f.upstream, 'checkout', '--quiet', '-b', 'next');
    const next = f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # next\n' });
    git(f.upstream, 'checkout', '--quiet', 'main');
    const seen = await preview({ ...options, upstreamRef: 'next' });
    expect(seen.variants.map((v) => [v.variant, v.impact])).toEqual([['web', 'changed']]);
    expect(seen.variants[0]!.upstream?.commit).toBe(next);
  });
});
