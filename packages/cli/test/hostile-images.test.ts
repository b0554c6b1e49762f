// Hostile inputs: container images a package's pipeline names. An upstream (or anyone's pull
// request to it, under preview) may name any image; only those the user allows run. Each case
// drives the built CLI in its own process with a `docker` first on PATH that answers `info` and
// records every `run`: the record is what ran. Real git repositories (@kdelta/test-support's fleet).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFleet, git, packageVariant, readTree, repository, writeTree, type Fleet } from '@kdelta/test-support';
import type { PreviewReport, RunReport } from '@kdelta/run';

const bin = fileURLToPath(new URL('../bin/kdelta.js', import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-hostile-images-')));
let n = 0;

const CATALOGUE = 'gcr.io/kpt-fn/set-labels:v0.2';
const CATALOGUE_GHCR = 'ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.4';
const EVIL = 'evil.example.com/tracker:latest';

function fresh(name: string): string {
  const dir = join(root, `${++n}-${name}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A `docker` that answers `info` and records the arguments of every other call, then echoes its input (a function that changes nothing). */
function fakeDocker(): { path: string; runs: () => string[] } {
  const dir = fresh('docker');
  const log = join(dir, 'runs.log');
  writeFileSync(join(dir, 'docker'), `#!/bin/sh\n[ "$1" = info ] && exit 0\nprintf '%s\\n' "$*" >> '${log}'\nexec cat\n`, { mode: 0o755 });
  return { path: dir, runs: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

/** The image each recorded `docker run` ran (its last argument). */
const ranImages = (runs: readonly string[]) => runs.map((line) => line.split(' ').at(-1));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built CLI in its own process: PATH with `docker` first, a fresh HOME, TMPDIR and cache. */
function kdelta(cwd: string, args: readonly string[], docker: { path: string }): Promise<Run> {
  const home = join(root, 'home');
  const tmp = join(root, 'tmp');
  mkdirSync(home, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  const env = {
    PATH: `${docker.path}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    TMPDIR: tmp,
    KDELTA_CACHE_DIR: join(root, 'cache'),
  };
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd, env, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** base-ns's Kptfile with a pipeline of these images (mutators first, then validators). */
function kptfile(mutators: readonly string[], validators: readonly string[] = []): string {
  const fns = (list: readonly string[]) => list.map((image) => `    - image: ${image}\n      configMap:\n        team: a\n`).join('');
  return `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base-ns\ninfo:\n  description: a namespace\npipeline:\n${
    mutators.length > 0 ? `  mutators:\n${fns(mutators)}` : ''
  }${validators.length > 0 ? `  validators:\n${fns(validators)}` : ''}`;
}

beforeAll(() => {
  if (!existsSync(fileURLToPath(new URL('../dist/main.js', import.meta.url)))) {
    throw new Error('packages/cli is not built: run `pnpm build` (pnpm test does) before this test');
  }
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('kdelta fn render runs only the images the user allows', () => {
  const cases: readonly [what: string, image: string, args: readonly string[], runs: boolean][] = [
    ["gcr.io/kpt-fn, kpt's catalogue, by default", CATALOGUE, [], true],
    ["ghcr.io/kptdev/krm-functions-catalog, kpt's catalogue, by default", CATALOGUE_GHCR, [], true],
    ['another registry, by default', EVIL, [], false],
    ['another registry, allowed by its repository', EVIL, ['--allow-image', 'evil.example.com/tracker'], true],
    [
      'a catalogue image when the user allows only another registry (no built-in under --runtime container)',
      CATALOGUE,
      ['--allow-image', 'registry.example/', '--runtime', 'container'],
      false,
    ],
  ];
  it.each(cases)('%s', async (_what, image, args, runs) => {
    const docker = fakeDocker();
    const dir = fresh('pkg');
    const files = {
      Kptfile: kptfile([image]),
      'namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n',
    };
    writeTree(dir, files);
    const r = await kdelta(dir, ['fn', 'render', '.', ...args], docker);
    if (runs) {
      expect(r.code, r.stderr).toBe(0);
      expect(ranImages(docker.runs())).toEqual([image]);
      return;
    }
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `Kptfile: pipeline.mutators[0]: function "${image}" would run the container image ${image}, which is not allowed`,
    );
    expect(r.stderr).toContain(`allow it with --allow-image ${image.replace(/:[^:/]*$/, '')}`);
    expect(r.stderr).toContain('Nothing written');
    expect(docker.runs()).toEqual([]);
    expect(readTree(dir)).toEqual(files);
  });

  it('a pattern that is not one is a usage error naming the flag', async () => {
    const docker = fakeDocker();
    const dir = fresh('pkg');
    writeTree(dir, { Kptfile: kptfile([CATALOGUE]) });
    const r = await kdelta(dir, ['fn', 'render', '.', '--allow-image', 'gcr.io/kpt-fn:v1/'], docker);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--allow-image: "gcr.io/kpt-fn:v1/" is not a registry or repository prefix');
    expect(docker.runs()).toEqual([]);
  });
});

describe('kdelta run and kdelta preview', () => {
  const fleets: Fleet[] = [];
  afterEach(() => {
    for (const f of fleets.splice(0)) f.cleanup();
  });

  /**
   * Variant a (cluster-01) at base-ns/v2, whose pipeline runs a catalogue image; variant b
   * (cluster-02) at base-ns/v3, whose pipeline also validates with an image of another registry.
   */
  function fleet(): Fleet {
    const f = createFleet(['cluster-01', 'cluster-02']);
    fleets.push(f);
    f.publish({ 'base-ns/Kptfile': kptfile([CATALOGUE]) }, 'base-ns/v2');
    f.publish({ 'base-ns/Kptfile': kptfile([CATALOGUE], [EVIL]) }, 'base-ns/v3');
    f.writeControl({
      'repositories.yaml': [
        repository('catalog', f.upstream),
        repository('cluster-01', f.downstream('cluster-01')),
        repository('cluster-02', f.downstream('cluster-02')),
      ].join('---\n'),
      'a.yaml': packageVariant('a', 'cluster-01', '', 'v2'),
      'b.yaml': packageVariant('b', 'cluster-02', '', 'v3'),
    });
    return f;
  }

  it('kdelta run renders with the catalogue image and proposes the package naming another registry unrendered, having run nothing of it', async () => {
    const f = fleet();
    const docker = fakeDocker();
    const r = await kdelta(f.control, ['run', '--mode', 'variants', '--report', 'report.json'], docker);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(f.control, 'report.json'), 'utf8')) as RunReport;
    const [a, b] = report.results;
    expect(a).toMatchObject({ variant: 'a', action: 'proposed' });
    expect(a?.renderFailure).toBeUndefined();
    expect(b).toMatchObject({
      variant: 'b',
      action: 'proposed',
      renderFailure: { function: EVIL, field: 'pipeline.validators[0]', kptfile: 'b/Kptfile' },
    });
    expect(b?.renderFailure?.message).toContain(`would run the container image ${EVIL}, which is not allowed`);
    expect(b?.renderFailure?.message).toContain('--allow-image evil.example.com/tracker');
    // the catalogue image ran for a only: b's render was refused before its catalogue mutator ran
    expect(ranImages(docker.runs())).toEqual([CATALOGUE]);
    expect(f.files('cluster-02', 'kdelta/b', 'b')['Kptfile']).toContain(EVIL);
  });

  it('a preview of an upstream ref runs no container and no exec function of it: built-ins render the catalogue, the rest is a render failure', async () => {
    const f = fleet();
    // the reviewed change: a pull request's branch adding another registry's image to both
    // pipelines, and an exec function that would leave a mark
    const mark = join(fresh('mark'), 'ran');
    const script = join(fresh('fn'), 'mark.sh');
    writeFileSync(script, `#!/bin/sh\necho ran >> '${mark}'\ncat\n`, { mode: 0o755 });
    git(f.upstream, 'checkout', '--quiet', '-b', 'next', 'base-ns/v2');
    f.publish({ 'base-ns/Kptfile': kptfile([CATALOGUE], [EVIL]) });
    git(f.upstream, 'checkout', '--quiet', '-b', 'next-exec', 'base-ns/v2');
    f.publish({ 'base-ns/Kptfile': `${kptfile([CATALOGUE])}    - exec: ${script}\n` });
    git(f.upstream, 'checkout', '--quiet', 'main');
    f.writeControl({ 'b.yaml': packageVariant('b', 'cluster-02', '', 'v2') });

    const docker = fakeDocker();
    const previewed = async (ref: string, ...args: string[]): Promise<PreviewReport> => {
      const r = await kdelta(f.control, ['preview', '--upstream-ref', ref, '--json', ...args], docker);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as PreviewReport;
    };

    const refused = await previewed('next');
    expect(refused.variants.map((v) => [v.variant, v.renderFailure?.function, v.renderFailure?.field])).toEqual([
      ['a', EVIL, 'pipeline.validators[0]'],
      ['b', EVIL, 'pipeline.validators[0]'],
    ]);
    expect(refused.variants[0]?.renderFailure?.message).toContain(
      `would run the container image ${EVIL}, which is not allowed (no image is allowed to run here): allow it with --allow-image evil.example.com/tracker`,
    );
    expect(docker.runs()).toEqual([]);

    // the catalogue's function has a built-in: the preview renders it without a container
    const ours = await previewed('base-ns/v2');
    expect(ours.variants.map((v) => [v.variant, v.renderFailure])).toEqual([
      ['a', undefined],
      ['b', undefined],
    ]);
    expect(docker.runs()).toEqual([]);

    const exec = await previewed('next-exec');
    expect(exec.variants.map((v) => v.renderFailure?.message)).toEqual([
      expect.stringContaining('pass --allow-exec'),
      expect.stringContaining('pass --allow-exec'),
    ]);
    expect(existsSync(mark)).toBe(false);
    expect(docker.runs()).toEqual([]);

    // allowed explicitly, the image runs (once per downstream); the catalogue's still runs built-in
    const allowed = await previewed('next', '--allow-image', 'evil.example.com/tracker');
    expect(allowed.variants.map((v) => v.renderFailure)).toEqual([undefined, undefined]);
    expect(ranImages(docker.runs())).toEqual([EVIL, EVIL]);
  });
});
