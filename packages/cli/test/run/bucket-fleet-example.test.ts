// examples/bucket-fleet, walked end to end on real git with the CLI's `main` in this process (the
// same walkthrough `pnpm demo:buckets` runs with one kdelta process per command): each step of the
// story, as the user sees it and as the repositories hold it. The check that the adopted copy is
// what `kpt pkg get` writes runs kpt, and is skipped, saying so, when kpt is not on PATH.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratch } from '@kdelta/test-support';
import type { Io } from '../../src/command.js';
import { main } from '../../src/main.js';

const example = join(import.meta.dirname, '..', '..', '..', '..', 'examples', 'bucket-fleet');
const kptAvailable = spawnSync('kpt', ['version'], { encoding: 'utf8' }).status === 0;

interface Walkthrough {
  walkthrough(options: {
    root: string;
    kdelta: (args: string[], cwd: string, env: NodeJS.ProcessEnv) => Promise<{ code: number; stdout: string; stderr: string }>;
    say: (text: string) => void;
  }): Promise<void>;
  BRANCHES: Record<string, string>;
}

let root: string;
let output = '';
let BRANCHES: Record<string, string>;
/** The walkthrough's output, one entry per `== ` step. */
let steps: string[] = [];

beforeAll(async () => {
  root = scratch();
  const mod = (await import(pathToFileURL(join(example, 'walkthrough.mjs')).href)) as Walkthrough;
  BRANCHES = mod.BRANCHES;
  await mod.walkthrough({
    root,
    async kdelta(args, cwd, env) {
      const out = { stdout: '', stderr: '' };
      const io: Io = { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), cwd, env };
      return { code: await main(args, io), ...out };
    },
    say: (text) => void (output += `${text}\n`),
  });
  steps = output.split('\n== ').slice(1);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const teamRepo = (team: string) => join(root, 'teams', `${team}.git`);
const show = (team: string, ref: string, file: string) =>
  execFileSync('git', ['show', `${ref}:bucket/${file}`], { cwd: teamRepo(team), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const heads = (team: string) =>
  execFileSync('git', ['for-each-ref', '--format=%(refname:short)', 'refs/heads'], { cwd: teamRepo(team), encoding: 'utf8' });
/** A row of the run's table: variant, downstream and action. */
const row = (variant: string, team: string, action: string) => new RegExp(`^${variant}\\s+${team}/bucket\\s+${action}\\s`, 'm');

describe('examples/bucket-fleet', () => {
  it('starts from two releases and a kpt copy of the first in team-analytics, owned by no variant', () => {
    expect(steps[0]).toContain('blueprints: tags catalog/bucket/v0.1.0, catalog/bucket/v0.2.0');
    // the repository's first commit: the walkthrough has merged since
    const first = execFileSync('git', ['rev-list', '--max-parents=0', 'main'], {
      cwd: teamRepo('team-analytics'),
      encoding: 'utf8',
    }).trim();
    const kptfile = parse(show('team-analytics', first, 'Kptfile'));
    const v010 = execFileSync('git', ['rev-parse', 'catalog/bucket/v0.1.0'], { cwd: join(root, 'blueprints'), encoding: 'utf8' }).trim();
    expect(kptfile.upstreamLock.git).toMatchObject({ ref: 'catalog/bucket/v0.1.0', commit: v010 });
    expect(Object.keys(kptfile.metadata.annotations)).toEqual(['config.kubernetes.io/local-config']);
    expect(() => show('team-analytics', first, 'package-context.yaml')).toThrow();
    // no revision in any control resource: the variants follow releases
    for (const file of ['analytics.yaml', 'buckets.yaml'])
      expect(parse(readFileSync(join(example, 'control', file), 'utf8')).spec.upstream).toEqual({
        repo: 'blueprints',
        package: 'catalog/bucket',
      });
  });

  it('first run: adopts the copy at the latest release, local values and edits kept, and fans the blueprint out with each team its values', () => {
    const first = steps[2]!;
    expect(first).toMatch(row('analytics-bucket', 'team-analytics', 'proposed'));
    expect(first).toMatch(row('buckets-team-payments-bucket', 'team-payments', 'proposed'));
    expect(first).toMatch(row('buckets-team-search-bucket', 'team-search', 'proposed'));
    expect(first).toContain('3 variant(s), 0 failed');
    expect(first).toContain('## kdelta: adopt bucket (analytics-bucket) at catalog/bucket/v0.2.0');
    expect(first).toContain('at `catalog/bucket/v0.2.0` (latest release v0.2.0 of catalog/bucket)');

    // what the first proposals held is on main: the teams merged them (fast-forward), and nothing since
    const adopted = 'main';
    const kptfile = parse(show('team-analytics', adopted, 'Kptfile'));
    expect(kptfile.metadata.annotations['config.porch.kpt.dev/package-variant']).toBe('analytics-bucket');
    expect(kptfile.upstreamLock.git.ref).toBe('catalog/bucket/v0.2.0');
    const bucket = parse(show('team-analytics', adopted, 'bucket.yaml'));
    // v0.2.0's changes merged in; the team's setter values (re-rendered) and its location kept
    expect(bucket.spec).toMatchObject({
      publicAccessPrevention: 'enforced',
      versioning: { enabled: true },
      location: 'EU',
      storageClass: 'nearline',
    });
    expect(bucket.metadata).toMatchObject({ name: 'analytics-prod-events', namespace: 'analytics' });
    expect(parse(show('team-analytics', adopted, 'setters.yaml')).data).toMatchObject({ name: 'events', 'project-id': 'analytics-prod' });
    // the package context a deployment repository's clone has
    expect(parse(show('team-analytics', adopted, 'package-context.yaml'))).toMatchObject({
      metadata: { name: 'kptfile.kpt.dev' },
      data: { name: 'bucket' },
    });

    for (const [team, name, namespace, storageClass] of [
      ['team-payments', 'payments-prod-ledger', 'payments', 'standard'],
      ['team-search', 'search-prod-index-snapshots', 'search', 'nearline'],
    ] as const) {
      const fanned = parse(show(team, 'main', 'bucket.yaml'));
      expect(fanned.metadata).toMatchObject({ name, namespace });
      expect(fanned.spec).toMatchObject({ storageClass, versioning: { enabled: true } });
    }
  });

  it('the teams merge their proposals', () => {
    for (const team of ['team-analytics', 'team-payments', 'team-search'])
      expect(steps[3]).toContain(`${team}: merged ${BRANCHES[team]} into main`);
  });

  it('a new release tag is proposed to every team by the next run, the control repository untouched', () => {
    const released = steps[4]!;
    expect(released).toContain('catalog/bucket/v0.3.0');
    for (const [variant, team] of [
      ['analytics-bucket', 'team-analytics'],
      ['buckets-team-payments-bucket', 'team-payments'],
      ['buckets-team-search-bucket', 'team-search'],
    ] as const) {
      expect(released).toMatch(row(variant, team, 'proposed'));
      expect(released).toMatch(
        new RegExp(`kdelta: update bucket \\(${variant}\\) to catalog/bucket/v0\\.3\\.0\\s+latest release v0\\.3\\.0 of catalog/bucket`),
      );
    }
    expect(released).toContain('control repository: no change, still 1 commit');
    const bucket = parse(show('team-analytics', BRANCHES['team-analytics']!, 'bucket.yaml'));
    expect(bucket.spec.lifecycleRule).toEqual([{ action: { type: 'Delete' }, condition: { daysSinceNoncurrentTime: 30 } }]);
    expect(bucket.spec.location).toBe('EU');
  });

  it('a proposal whose branch is deleted unmerged is reported declined and not proposed again', () => {
    const declined = steps[5]!;
    expect(declined).toMatch(row('buckets-team-search-bucket', 'team-search', 'declined'));
    expect(declined).toMatch(row('analytics-bucket', 'team-analytics', 'unchanged'));
    expect(declined).toMatch(row('buckets-team-payments-bucket', 'team-payments', 'unchanged'));
    expect(declined).toMatch(/^declined\s+team-search\s+kdelta\/buckets-team-search-bucket\s/m);
    expect(declined).toContain('rm .kdelta/proposals/team-search/buckets-team-search-bucket.md');
    expect(heads('team-search')).toBe('main\n');
  });

  it.skipIf(!kptAvailable)('team-analytics/bucket is what `kpt pkg get` writes, then the edits the walkthrough names (needs kpt)', () => {
    const work = join(root, 'kpt-get');
    mkdirSync(work);
    execFileSync('git', ['init', '--quiet'], { cwd: work });
    execFileSync('kpt', ['pkg', 'get', `${join(root, 'blueprints')}.git/catalog/bucket@v0.1.0`, 'bucket'], { cwd: work, stdio: 'ignore' });
    const got = (file: string) => readFileSync(join(work, 'bucket', file), 'utf8');
    const ours = (file: string) => readFileSync(join(example, 'team-analytics', 'bucket', file), 'utf8');
    expect(got('Kptfile').replaceAll(join(root, 'blueprints'), 'https://git.example.com/platform/blueprints')).toBe(ours('Kptfile'));
    expect(got('README.md')).toBe(ours('README.md'));
    const edit = (text: string, pairs: [string, string][]) =>
      pairs.reduce((t, [from, to]) => {
        expect(t).toContain(from);
        return t.replace(from, to);
      }, text);
    expect(
      edit(got('setters.yaml'), [
        ['  name: bucket\n', '  name: events\n'],
        ['namespace: config-control', 'namespace: analytics'],
        ['project-id: blueprints-project', 'project-id: analytics-prod'],
        ['storage-class: standard', 'storage-class: nearline'],
      ]),
    ).toBe(ours('setters.yaml'));
    expect(
      edit(got('bucket.yaml'), [
        ['name: blueprints-project-bucket #', 'name: analytics-prod-events #'],
        ['  namespace: config-control\n', '  namespace: analytics\n'],
        ['project-id: blueprints-project #', 'project-id: analytics-prod #'],
        ['storageClass: standard', 'storageClass: nearline'],
        ['location: us-central1', 'location: EU'],
      ]),
    ).toBe(ours('bucket.yaml'));
  });
});
