import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { main } from '../../src/main.js';

const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-run-cache-'));
afterEach(() => {
  for (const f of fleets.splice(0)) f.cleanup();
});
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

function fleet(downstreams: string[]): Fleet {
  const f = createFleet(downstreams);
  fleets.push(f);
  return f;
}

async function kdeltaRun(f: Fleet): Promise<{ code: number; stderr: string; stdout: string }> {
  const out = { stdout: '', stderr: '' };
  const code = await main(['run'], {
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    cwd: f.control,
    env: { ...process.env, KDELTA_CACHE_DIR: cacheDir },
  });
  return { code, ...out };
}

/** A set fanning base-ns out to every Repository labelled env: prod, its package named by `expr`. */
const set = (expr: string) =>
  `apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: buckets\nspec:\n  upstream:\n    repo: catalog\n    package: base-ns\n    revision: v1\n  targets:\n  - repositorySelector:\n      matchLabels:\n        env: prod\n    template:\n      downstream:\n        packageExpr: ${JSON.stringify(expr)}\n`;

const count = (text: string, part: string) => text.split(part).length - 1;

describe('kdelta run: errors a user can act on', () => {
  it("a typo in a Repository's apiVersion is reported once, at its file and line, with the group meant, not as three missing Repositories", async () => {
    const f = fleet(['c1', 'c2', 'c3']);
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream).replace('config.porch.kpt.dev', 'config.porch.kpt.io'),
        ...['c1', 'c2', 'c3'].map((d) => repository(d, f.downstream(d), { env: 'prod' })),
      ].join('---\n'),
      'set.yaml': set('"x-" + repository.name'),
      'typo.yaml': packageVariant('typo', 'c1').replace('kind: PackageVariant', 'kind: PackageVarient'),
    });
    const r = await kdeltaRun(f);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      '.kdelta/repositories.yaml: document 1 (Repository "catalog"): apiVersion: unknown group "config.porch.kpt.io" for Repository: did you mean config.porch.kpt.dev/v1alpha1 (kind Repository)? A run reads it only there (line 1)',
    );
    expect(r.stderr).toContain(
      '.kdelta/typo.yaml: document 1 (PackageVarient "typo"): kind: unknown kind "PackageVarient" in config.porch.kpt.dev/v1alpha1: did you mean PackageVariant (config.porch.kpt.dev/v1alpha1)?',
    );
    expect(r.stderr).toMatch(/did you mean PackageVariant .*\(line 2\)\n/);
    expect(r.stderr).not.toContain('does not exist');
  });

  it('a CEL template reading a missing label names each Repository that lacks it, once', async () => {
    const f = fleet(['c1', 'c2', 'c3']);
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('c1', f.downstream('c1'), { env: 'prod', region: 'east' }),
        repository('c2', f.downstream('c2'), { env: 'prod' }),
        repository('c3', f.downstream('c3'), { env: 'prod' }),
      ].join('---\n'),
      // two targets select the same Repositories: the problem is the Repository's, said once
      'set.yaml': set('"x-" + repository.labels.region').replace(
        '  targets:\n',
        '  targets:\n  - repositories:\n    - name: c2\n      packageNames: [a, b]\n    template:\n      downstream:\n        packageExpr: "\\"y-\\" + repository.labels.region"\n',
      ),
    });
    const r = await kdeltaRun(f);
    expect(r.code).toBe(1);
    expect(count(r.stderr, 'Repository "c2" has no label "region"')).toBe(2); // once per template field that reads it
    expect(count(r.stderr, 'Repository "c3" has no label "region"')).toBe(1);
    expect(r.stderr).not.toContain('"c1" has no label');
    expect(r.stderr).toMatch(
      /\.kdelta\/set\.yaml: document 1 \(PackageVariantSet "buckets"\): spec\.targets\[1\]: template\.downstream\.packageExpr: ERROR: <input>:1:\d+: no such key: region \(Repository "c3" has no label "region"\) \(line 17\)/,
    );
  });

  it('git-level failures name the Repository resource and its file', async () => {
    const f = fleet(['c1', 'c2']);
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', join(f.root, 'no-such-repository')),
        repository('c1', f.downstream('c1')),
        repository('c2', f.downstream('c2')).replace('branch: main', 'branch: mian'),
      ].join('---\n'),
      'a.yaml': packageVariant('a', 'c1'),
    });
    const first = await kdeltaRun(f);
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(
      /a → c1\/a: failed: \.kdelta\/repositories\.yaml: document 1 \(Repository "catalog"\): spec\.git\.repo: git ls-remote failed: .*does not appear to be a git repository/,
    );

    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('c1', f.downstream('c1')),
        repository('c2', f.downstream('c2')).replace('branch: main', 'branch: mian'),
      ].join('---\n'),
      'a.yaml': packageVariant('a', 'c2'),
    });
    const second = await kdeltaRun(f);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `a → c2/a: failed: .kdelta/repositories.yaml: document 3 (Repository "c2"): spec.git.branch: branch "mian" does not exist in ${f.downstream('c2')}`,
    );
  });

  it('control errors carry the line of the field', async () => {
    const f = fleet(['c1']);
    f.writeControl({
      'repositories.yaml': [repository('catalog', f.upstream), repository('c1', f.downstream('c1'))].join('---\n'),
      'web.yaml': `# the web package\n${packageVariant('web', 'c1', '  adoptPolicy: adoptExisting\n')}---\n${packageVariant('db', 'nowhere')}`,
    });
    const r = await kdeltaRun(f);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('.kdelta/web.yaml: document 1 (PackageVariant "web"): spec.adoptPolicy: unknown field');
    expect(r.stderr).toMatch(/spec\.adoptPolicy: unknown field .*\(line 15\)\n/);
  });
});
