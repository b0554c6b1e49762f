import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeGitHub, startFakeGitHub } from '@kdelta/fake-github';
import { createFleet, type Fleet, git, readTree, repository } from '@kdelta/test-support';
import { afterAll, afterEach, expect } from 'vitest';
import { run, type RunOptions } from '../../run.js';
import type { RunReport } from '../../report/result.js';

/**
 * A fleet on either forge, for the scenarios every forge must pass: the upstream and the control
 * repository on disk, each downstream a bare repository (the local forge) or a repository of the
 * fake GitHub (the GitHub forge). `run()` runs in-process; a person's doings (merge, decline, tick
 * a dashboard box) are done as that forge's users do them.
 */
export interface ScenarioFleet extends Fleet {
  /** `run()` on this forge, with the test's cache and no dashboard unless `extra` asks for one. */
  run(extra?: Partial<RunOptions>): Promise<RunReport>;
  /** `run()` with the fleet's dashboard (a file on the local forge, an issue of the control repository on GitHub). */
  runWithDashboard(extra?: Partial<RunOptions>): Promise<RunReport>;
  /** A reviewer merges the open proposal of `variant` into `downstream`'s main. */
  merge(downstream: string, variant: string): Promise<void>;
  /** A reviewer says no to the open proposal of `variant` (deletes its branch; closes the pull request). */
  decline(downstream: string, variant: string): Promise<void>;
  /** Whether `variant`'s proposal branch exists on `downstream`. */
  hasBranch(downstream: string, variant: string): boolean;
  /** Every ref of every downstream and every proposal the forge holds: equal before and after a run that wrote nothing. */
  snapshot(): string;
  /** Write requests to the forge's API since the last `snapshot()` (the local forge has none). */
  apiWrites(): number;
  /** A person ticks every "allow these removals" box of the dashboard. */
  tickAllowRemovals(): void;
  /** The `repositories.yaml` of the control resources: `catalog` and each downstream, with these labels. */
  repositories(labels?: Readonly<Record<string, Readonly<Record<string, string>>>>): string;
}

export interface ScenarioForge {
  readonly name: 'local' | 'github';
  /** A new fleet of these downstreams (each with a README on main), `repositories.yaml` written. */
  fleet(downstreams: readonly string[]): Promise<ScenarioFleet>;
}

/** The variables through which the machine running the tests could hand kdelta a GitHub of its own. */
const GITHUB_VARIABLES = [
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'KDELTA_GIT_TOKEN',
  'GITHUB_API_URL',
  'GITHUB_SERVER_URL',
  'GITHUB_GRAPHQL_URL',
  'GITHUB_REPOSITORY',
];

function cleanEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of GITHUB_VARIABLES) delete env[k];
  return env;
}

const DASHBOARD_BOX = /- \[ \] <!-- kdelta-allow-removals:/g;
const TICKED_BOX = '- [x] <!-- kdelta-allow-removals:';

/**
 * The two forges of a test file, each fleet removed (and its fake GitHub checked to have seen no
 * request GitHub's API description refuses, then closed) after its test. Call at the top of the file.
 */
export function bothForges(): readonly ScenarioForge[] {
  const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-scenario-cache-'));
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  const onDisk = (downstreams: readonly string[]): Fleet => {
    const f = createFleet(downstreams);
    cleanups.push(() => f.cleanup());
    return f;
  };
  const repositoriesOf = (f: Fleet, downstreams: readonly string[], url: (d: string) => string) => {
    return (labels: Readonly<Record<string, Readonly<Record<string, string>>>> = {}) =>
      [repository('catalog', f.upstream), ...downstreams.map((d) => repository(d, url(d), { ...labels[d] }))].join('---\n');
  };

  const local: ScenarioForge = {
    name: 'local',
    async fleet(downstreams) {
      const f = onDisk(downstreams);
      const proposals = join(f.control, '.kdelta', 'proposals');
      const dashboardFile = join(proposals, 'dashboard.md');
      const repositories = repositoriesOf(f, downstreams, (d) => f.downstream(d));
      f.writeControl({ 'repositories.yaml': repositories() });
      const options = (extra: Partial<RunOptions>): RunOptions => ({
        cwd: f.control,
        cacheDir,
        env: cleanEnv(),
        dashboard: false,
        ...extra,
      });
      return Object.assign(f, {
        run: (extra: Partial<RunOptions> = {}) => run(options(extra)),
        runWithDashboard: (extra: Partial<RunOptions> = {}) => run(options({ dashboard: {}, ...extra })),
        async merge(downstream: string, variant: string) {
          const work = mkdtempSync(join(f.root, 'merge-'));
          git(f.root, 'clone', '--quiet', f.downstream(downstream), work);
          git(work, 'merge', '--quiet', '--no-edit', `origin/kdelta/${variant}`);
          git(work, 'push', '--quiet', 'origin', 'main');
          rmSync(work, { recursive: true, force: true });
        },
        async decline(downstream: string, variant: string) {
          git(f.downstream(downstream), 'update-ref', '-d', `refs/heads/kdelta/${variant}`);
        },
        hasBranch: (downstream: string, variant: string) => f.refs(downstream).includes(`refs/heads/kdelta/${variant} `),
        snapshot: () => JSON.stringify({ refs: downstreams.map((d) => f.refs(d)), proposals: readTree(proposals) }, null, 1),
        apiWrites: () => 0,
        tickAllowRemovals() {
          const before = readFileSync(dashboardFile, 'utf8');
          const after = before.replace(DASHBOARD_BOX, TICKED_BOX);
          expect(after, `no "allow these removals" box to tick:\n${before}`).not.toBe(before);
          writeFileSync(dashboardFile, after);
        },
        repositories,
      });
    },
  };

  let owners = 0;
  const github: ScenarioForge = {
    name: 'github',
    async fleet(downstreams) {
      const gh: FakeGitHub = await startFakeGitHub();
      cleanups.push(async () => {
        expect(gh.violations).toEqual([]);
        await gh.close();
      });
      const f = onDisk([]);
      const owner = `org-${++owners}`;
      for (const d of downstreams) await gh.createRepo(`${owner}/${d}`, { defaultBranch: 'main', files: { 'README.md': `# ${d}\n` } });
      const controlRepo = `${owner}/control`;
      await gh.createRepo(controlRepo, { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
      const repositories = repositoriesOf(f, downstreams, (d) => `${gh.serverUrl}/${owner}/${d}.git`);
      f.writeControl({ 'repositories.yaml': repositories() });
      const options = (extra: Partial<RunOptions>): RunOptions => ({
        cwd: f.control,
        cacheDir,
        env: cleanEnv(),
        forge: 'github',
        github: { token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, pacing: { writeSpacing: false, retryAfterUnitMs: 20 } },
        dashboard: false,
        ...extra,
      });
      const openPull = (downstream: string, variant: string) => {
        const pull = gh.pulls(`${owner}/${downstream}`).find((p) => p.state === 'open' && p.head.ref === `kdelta/${variant}`);
        expect(pull, `an open pull request of ${variant} on ${downstream}`).toBeDefined();
        return pull!;
      };
      const refsOf = (d: string) =>
        execFileSync('git', ['for-each-ref', '--format=%(refname) %(objectname)'], { cwd: gh.gitDir(`${owner}/${d}`), encoding: 'utf8' });
      return Object.assign(f, {
        files: (downstream: string, branch: string, dir = '') => filesOn(f.root, gh.gitDir(`${owner}/${downstream}`), branch, dir),
        run: (extra: Partial<RunOptions> = {}) => run(options(extra)),
        runWithDashboard: (extra: Partial<RunOptions> = {}) => run(options({ dashboard: { repository: controlRepo }, ...extra })),
        async merge(downstream: string, variant: string) {
          await gh.mergePull(`${owner}/${downstream}`, openPull(downstream, variant).number);
        },
        async decline(downstream: string, variant: string) {
          const res = await fetch(`${gh.apiUrl}/repos/${owner}/${downstream}/pulls/${openPull(downstream, variant).number}`, {
            method: 'PATCH',
            headers: { authorization: `token ${gh.token}`, 'content-type': 'application/json', accept: 'application/vnd.github+json' },
            body: JSON.stringify({ state: 'closed' }),
          });
          expect(res.status).toBe(200);
        },
        hasBranch: (downstream: string, variant: string) => refsOf(downstream).includes(`refs/heads/kdelta/${variant} `),
        snapshot() {
          const state = JSON.stringify(
            { refs: downstreams.map(refsOf), pulls: downstreams.map((d) => gh.pulls(`${owner}/${d}`)) },
            null,
            1,
          );
          gh.clearRequests();
          return state;
        },
        apiWrites: () => gh.writes(),
        tickAllowRemovals() {
          const dashboard = gh.issues(controlRepo).find((i) => i.title === 'kdelta dashboard');
          const before = dashboard?.body ?? '';
          const after = before.replace(DASHBOARD_BOX, TICKED_BOX);
          expect(after, `no "allow these removals" box to tick:\n${before}`).not.toBe(before);
          gh.editIssue(controlRepo, dashboard!.number, after);
        },
        repositories,
      });
    },
  };
  return [local, github];
}

/** The files under `dir` of `branch` of the repository in `gitDir`. */
function filesOn(root: string, gitDir: string, branch: string, dir: string): Record<string, string> {
  const work = mkdtempSync(join(root, 'read-'));
  git(root, 'clone', '--quiet', '--branch', branch, gitDir, work);
  const files = readTree(join(work, dir));
  rmSync(work, { recursive: true, force: true });
  return Object.fromEntries(Object.entries(files).filter(([k]) => !k.startsWith('.git/')));
}

/** What each job of a report did: `<variant> <downstream>` → its action (and the code of a failure). */
export function actions(report: RunReport): Record<string, string> {
  return Object.fromEntries(report.results.map((r) => [`${r.variant} ${r.downstream}`, r.code ? `${r.action} ${r.code}` : r.action]));
}
