import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from './__fixtures__/runner.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-strict-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
}

function run(cwd: string, ...args: string[]) {
  return cli(args, cwd, { ...process.env, KDELTA_CACHE_DIR: join(root, 'cache') });
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(abs, e.name), r);
      else out[r] = readFileSync(join(abs, e.name), 'utf8');
    }
  };
  walk(dir, '');
  return out;
}

const KPTFILE = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n';
const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: "${v}"\n`;

/** An upstream repository with package `web` at v1 and `v2` (v2's files given), fetched at v1 into a workspace. */
async function fetched(name: string, v2: Record<string, string>) {
  const up = join(root, name, 'upstream');
  mkdirSync(join(up, 'web'), { recursive: true });
  git(up, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(up, 'web', 'Kptfile'), KPTFILE);
  writeFileSync(join(up, 'web', 'cm.yaml'), cm('1'));
  git(up, 'add', '-A');
  git(up, 'commit', '--quiet', '-m', 'v1');
  git(up, 'tag', 'v1');
  for (const [file, text] of Object.entries(v2)) writeFileSync(join(up, 'web', file), text);
  git(up, 'add', '-A');
  git(up, 'commit', '--quiet', '-m', 'v2');
  git(up, 'tag', 'v2');
  const ws = join(root, name, 'ws');
  mkdirSync(ws, { recursive: true });
  const got = await run(ws, 'pkg', 'get', `${up}.git/web@v1`, 'web');
  expect(got.code, got.stderr).toBe(0);
  return { up, ws, pkg: join(ws, 'web') };
}

describe('every command reads the Kptfile the same strict way', () => {
  const bad: [string, (text: string) => string, string][] = [
    [
      'an older apiVersion',
      (t) => t.replace('kpt.dev/v1', 'kpt.dev/v1alpha1'),
      'Kptfile: apiVersion: expected kpt.dev/v1, got "kpt.dev/v1alpha1"',
    ],
    ['a wrong kind', (t) => t.replace('kind: Kptfile', 'kind: Package'), 'Kptfile: kind: expected Kptfile, got "Package"'],
    ['an unknown field', (t) => `${t}info:\n  sites: https://example.com\n`, 'Kptfile: info.sites: unknown field'],
  ];
  for (const [what, change, message] of bad) {
    it(`pkg update, pkg diff and merge3 all refuse ${what} with the same message, changing nothing`, async () => {
      const { ws, pkg } = await fetched(`bad-${what.replace(/\W+/g, '-')}`, { 'cm.yaml': cm('2') });
      writeFileSync(join(pkg, 'Kptfile'), change(readFileSync(join(pkg, 'Kptfile'), 'utf8')));
      const before = snapshot(pkg);
      const update = await run(ws, 'pkg', 'update', 'web@v2');
      expect(update.code).toBe(1);
      expect(update.stderr).toContain(message);
      expect(snapshot(pkg)).toEqual(before);
      const diff = await run(ws, 'pkg', 'diff', 'web');
      expect(diff.code).toBe(1);
      expect(diff.stderr).toContain(message);

      for (const side of ['o', 'u', 'l']) mkdirSync(join(ws, 'm3', side), { recursive: true });
      writeFileSync(join(ws, 'm3', 'o', 'Kptfile'), KPTFILE);
      writeFileSync(join(ws, 'm3', 'u', 'Kptfile'), KPTFILE);
      writeFileSync(join(ws, 'm3', 'l', 'Kptfile'), change(KPTFILE));
      const merge = await run(join(ws, 'm3'), 'merge3', '--original', 'o', '--updated', 'u', '--local', 'l');
      expect(merge.code).toBe(1);
      expect(merge.stderr).toContain(message);
    });
  }

  it('accepts every field a kpt Kptfile has, status.renderStatus included', async () => {
    const { ws, pkg } = await fetched('kpt-written', { 'cm.yaml': cm('2') });
    const full = `${readFileSync(join(pkg, 'Kptfile'), 'utf8')}info:
  site: https://example.com
  emails: [a@example.com]
  license: Apache-2.0
  licenseFile: LICENSE
  description: web
  keywords: [web]
  man: docs
  readinessGates:
  - conditionType: Ready
pipeline:
  mutators:
  - name: labels
    image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2
    configMap: {app: web}
    selectors: [{kind: ConfigMap, name: web}]
    exclude: [{kind: Deployment}]
  validators:
  - exec: ./check.sh
    configPath: check.yaml
inventory:
  namespace: ns
  name: inv
  inventoryID: abc
status:
  conditions:
  - type: Ready
    status: "True"
    reason: Done
    message: ok
  renderStatus:
    mutationSteps:
    - name: labels
      image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2
      exitCode: 0
`;
    writeFileSync(join(pkg, 'Kptfile'), full);
    const r = await run(ws, 'pkg', 'update', 'web@v2');
    expect(r.stderr).not.toContain('unknown field');
    expect(r.code).toBe(0);
    expect(readFileSync(join(pkg, 'cm.yaml'), 'utf8')).toContain('v: "2"');
    expect(readFileSync(join(pkg, 'Kptfile'), 'utf8')).toContain('renderStatus:');
  });
});

describe("errors in upstream's files name the side and the package path", () => {
  it('a broken upstream resource is named upstream (<repo>/<dir>@<ref>): <file>, never by a scratch path', async () => {
    const { up, ws, pkg } = await fetched('bad-upstream-yaml', { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: [\n' });
    const before = snapshot(pkg);
    const r = await run(ws, 'pkg', 'update', 'web@v2');
    expect(r.code).toBe(1);
    const error = r.stderr.split('\n').find((l) => l.startsWith('kdelta pkg update:'));
    expect(error).toMatch(
      new RegExp(`^kdelta pkg update: upstream \\(${up}/web@v2\\): cm\\.yaml \\(upstream\\): document 0: invalid YAML \\(line 4\\)`),
    );
    // the scratch copies (kdelta-<side>-XXXX under the temp directory) are never named
    expect(r.stderr).not.toMatch(/kdelta-(upstream|origin|fetch|scratch)[^/ ]*-/);
    expect(snapshot(pkg)).toEqual(before);
  });

  it('a bad upstream Kptfile is named upstream (...): Kptfile with the field', async () => {
    const { up, ws, pkg } = await fetched('bad-upstream-kptfile', { Kptfile: `${KPTFILE}pipeline:\n  mutator: []\n` });
    const before = snapshot(pkg);
    for (const command of ['update', 'diff']) {
      const r = await run(ws, 'pkg', command, 'web@v2');
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n')[0]).toMatch(
        new RegExp(`^kdelta pkg ${command}: upstream \\(${up}/web@v2\\): Kptfile: pipeline\\.mutator: unknown field`),
      );
      expect(r.stderr).not.toMatch(/kdelta-(upstream|origin|fetch|scratch)[^/ ]*-/);
    }
    expect(snapshot(pkg)).toEqual(before);
  });

  it("a bad origin Kptfile (upstream's file at the locked commit) is named origin (...): Kptfile", async () => {
    const { up, ws, pkg } = await fetched('bad-origin-kptfile', { 'cm.yaml': cm('2') });
    // upstream's Kptfile at the locked commit had a field kdelta does not know; v3 dropped it
    writeFileSync(join(up, 'web', 'Kptfile'), `${KPTFILE}foo: bar\n`);
    git(up, 'commit', '--quiet', '-am', 'bad Kptfile');
    const locked = git(up, 'rev-parse', 'HEAD');
    writeFileSync(join(up, 'web', 'Kptfile'), KPTFILE);
    git(up, 'commit', '--quiet', '-am', 'v3');
    git(up, 'tag', 'v3');
    const kptfile = join(pkg, 'Kptfile');
    writeFileSync(kptfile, readFileSync(kptfile, 'utf8').replace(/commit: \w+/, `commit: ${locked}`));
    const before = snapshot(pkg);
    for (const command of ['update', 'diff']) {
      const r = await run(ws, 'pkg', command, 'web@v3');
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n')[0]).toMatch(
        new RegExp(`^kdelta pkg ${command}: origin \\(${up}/web@${locked}\\): Kptfile: foo: unknown field`),
      );
      expect(r.stderr).not.toMatch(/kdelta-(upstream|origin|fetch|scratch)[^/ ]*-/);
    }
    expect(snapshot(pkg)).toEqual(before);
  });

  it('pkg get of a package with a bad Kptfile names it upstream (...): Kptfile and writes nothing', async () => {
    const { up, ws } = await fetched('get-bad-kptfile', { Kptfile: KPTFILE.replace('kpt.dev/v1', 'kpt.dev/v1alpha1') });
    const before = snapshot(ws);
    const r = await run(ws, 'pkg', 'get', `${up}.git/web@v2`, 'again');
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toMatch(
      new RegExp(`^kdelta pkg get: upstream \\(${up}/web@v2\\): Kptfile: apiVersion: expected kpt\\.dev/v1, got "kpt\\.dev/v1alpha1"`),
    );
    expect(r.stderr).not.toMatch(/kdelta-(upstream|origin|fetch|scratch)[^/ ]*-/);
    expect(snapshot(ws)).toEqual(before);
  });
});
