import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeGitHub, type FakeGitHubOptions, startFakeGitHub } from '@kdelta/fake-github';
import { createFleet, type Fleet, git, gitEnv, readTree, repository, writeTree } from '@kdelta/test-support';
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import { parseRecord } from '../../src/forges/local.js';
import type { ProposalStatus } from '../../src/forges/forge.js';
import { getPackageFiles, type Materialize, run, type RunOptions, type RunReport } from '../../src/index.js';

/**
 * Run behaviours as scenarios, written once and run against every forge (as `forge-suite.ts`
 * does for the forge contract): `run()` in this process on real git repositories in temporary
 * folders, the downstreams on disk (local forge) or on the fake GitHub. A scenario speaks of
 * what a person sees and does — a proposal's body and state, a branch's commits, a merge, a "no"
 * — and the fleet says how each forge shows or takes it. A variation of a behaviour that no forge
 * sees differently (which set of removals a tick allows) runs on one forge, to keep the suite's
 * time.
 */

/**
 * The scenarios' stand-in for the 3-way update, where what is around it is tested: the upstream
 * package at the resolved commit, replacing the downstream's files (upstream wins).
 */
export const copyMaterialize: Materialize = async (input) => {
  const files = await getPackageFiles(input);
  return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
};

export type ForgeKind = 'local' | 'github';
export const FORGES: readonly ForgeKind[] = ['local', 'github'];

/** A proposal as a reviewer sees it on the forge. */
export interface SeenProposal {
  readonly body: string;
  /** `open`, `merged`, or how the forge records a proposal closed unmerged (`closed`, `declined`). */
  readonly state: string;
  readonly draft: boolean;
  /** kdelta's status on the proposal's head (the forge's commit status on GitHub). */
  readonly status: ProposalStatus | undefined;
  /** The proposal's address on the forge, as kdelta links it. */
  readonly url: string;
}

export interface ScenarioFleet {
  readonly forge: ForgeKind;
  /** The upstream repository (on disk for both forges), with base-ns tagged base-ns/v1. */
  readonly upstream: string;
  /** The control repository's work tree (`.kdelta/` below it). */
  readonly control: string;
  /** The author name a person's commits carry on this forge. */
  readonly person: string;
  writeControl(files: Readonly<Record<string, string | null>>): void;
  publish(files: Readonly<Record<string, string | null>>, tag?: string): string;
  /** One run of kdelta on this fleet, in this process. */
  run(extra?: Partial<RunOptions>): Promise<RunReport>;
  /** git in a downstream's (bare) repository. */
  git(downstream: string, ...args: string[]): string;
  /** The commit a branch of a downstream is at, or undefined when there is no such branch. */
  tip(downstream: string, branch: string): string | undefined;
  /** A file on a branch of a downstream. */
  show(downstream: string, branch: string, path: string): string;
  isAncestor(downstream: string, commit: string, of: string): boolean;
  /** A person commits `files` on a branch of a downstream; returns the commit. */
  commitAs(downstream: string, branch: string, files: Readonly<Record<string, string | null>>, message?: string): Promise<string>;
  /** Every proposal with head `head` in a downstream, oldest first. */
  proposals(downstream: string, head: string): SeenProposal[];
  /** The newest proposal with head `head` in a downstream. */
  proposal(downstream: string, head: string): SeenProposal;
  /** A reviewer edits the newest proposal's body on the forge's page. */
  editBody(downstream: string, head: string, edit: (body: string) => string): Promise<void>;
  /** A reviewer merges the open proposal with a merge commit, as a forge's merge button does. */
  merge(downstream: string, head: string): Promise<void>;
  /** A person reopens the newest pull request (GitHub; the local forge has no such thing). */
  reopen(downstream: string, head: string): Promise<void>;
  /** A person labels the newest proposal (GitHub's labels; the local forge has none). */
  label(downstream: string, head: string, name: string): void;
  /** A reviewer says no: closes the open proposal unmerged (the local forge: deletes its branch). */
  decline(downstream: string, head: string): Promise<void>;
  /** The fleet dashboard's text, or undefined when there is none. */
  dashboard(): string | undefined;
  /** A person edits the dashboard on the forge (the file; GitHub's issue). */
  editDashboard(edit: (body: string) => string): void;
  /** The fake GitHub of a GitHub fleet, for what only GitHub has; undefined on the local forge. */
  readonly github: { readonly gh: FakeGitHub; slug(downstream: string): string; readonly controlRepo: string } | undefined;
  /**
   * Remembers this moment: `wrote()` says whether anything was written on the forge since (the
   * dashboard counts when the fleet was made with one).
   */
  mark(): void;
  wrote(): boolean;
}

export interface ScenarioSetup {
  readonly forge: ForgeKind;
  /** A new fleet of `downstreams` (each with a README on main), variants from `control`, removed after the test. */
  fleet(downstreams: readonly string[], control?: Readonly<Record<string, string>>, options?: FleetOptions): Promise<ScenarioFleet>;
}

export interface FleetOptions {
  /**
   * The run keeps a fleet dashboard and `wrote()` counts its writes (on GitHub an issue of the
   * control repository, made there; the local forge keeps its file in any case).
   */
  readonly dashboard?: boolean;
  /** The run copies the upstream package (`copyMaterialize`) where the 3-way update is not what is tested. */
  readonly copy?: boolean;
  /** Labels of the downstreams' Repositories, by downstream (a rollout wave's label). */
  readonly labels?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export interface ScenarioOptions {
  /** The fake GitHub's options (its tokens); kdelta's token is `ghs_fake`. */
  readonly fake?: FakeGitHubOptions;
}

/**
 * One `describe` per forge, each calling `body` with that forge's fleets. Call at the top of a
 * test file (it registers the hooks: fleets removed after each test; the fake GitHub started once
 * for the file, checked to have seen no request GitHub's rules refuse, then closed).
 */
export function describeScenarios(name: string, options: ScenarioOptions, body: (setup: ScenarioSetup) => void): void {
  for (const forge of FORGES) {
    describe(`${name} (${forge} forge)`, () => {
      body(forge === 'local' ? localSetup() : githubSetup(options.fake));
    });
  }
}

/** One fetch cache for a describe, and the fleets of its tests, each removed after its test. */
function fleets(): { cacheDir: () => string; track(f: Fleet): Fleet } {
  let cacheDir: string | undefined;
  const made: Fleet[] = [];
  beforeAll(() => {
    cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-scenario-cache-'));
  });
  afterEach(() => {
    for (const f of made.splice(0)) f.cleanup();
  });
  afterAll(() => {
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });
  return {
    cacheDir: () => cacheDir!,
    track: (f) => {
      made.push(f);
      return f;
    },
  };
}

const PERSON = { name: 'Octo Human', email: 'human@example.com' };

/** git as a person: a clone of `repo`, `work` done in it, pushed back; the folder removed after. */
function asPerson(root: string, repo: string, branch: string, work: (dir: string) => void): string {
  const dir = mkdtempSync(join(root, 'person-'));
  git(root, 'clone', '--quiet', '--branch', branch, repo, dir);
  work(dir);
  git(dir, 'push', '--quiet', 'origin', branch);
  const head = git(dir, 'rev-parse', 'HEAD');
  rmSync(dir, { recursive: true, force: true });
  return head;
}

function personEnv(): NodeJS.ProcessEnv {
  return {
    ...gitEnv,
    GIT_AUTHOR_NAME: PERSON.name,
    GIT_AUTHOR_EMAIL: PERSON.email,
    GIT_COMMITTER_NAME: PERSON.name,
    GIT_COMMITTER_EMAIL: PERSON.email,
  };
}

function isAncestorIn(dir: string, commit: string, of: string): boolean {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', commit, of], { cwd: dir, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function showIn(dir: string, branch: string, path: string): string {
  return execFileSync('git', ['show', `refs/heads/${branch}:${path}`], { cwd: dir, encoding: 'utf8' });
}

function tipIn(dir: string, branch: string): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { cwd: dir, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

function localSetup(): ScenarioSetup {
  const { cacheDir, track } = fleets();
  return {
    forge: 'local',
    async fleet(downstreams, control = {}, options = {}) {
      const f = track(createFleet(downstreams));
      const dashboardFile = join(f.control, '.kdelta', 'proposals', 'dashboard.md');
      f.writeControl({
        'repositories.yaml': [
          repository('catalog', f.upstream),
          ...downstreams.map((d) => repository(d, f.downstream(d), options.labels?.[d])),
        ].join('---\n'),
        ...control,
      });
      const recordFile = (downstream: string, head: string) =>
        join(f.control, '.kdelta', 'proposals', downstream, `${head.replace(/^kdelta\//, '').replace(/\//g, '_')}.md`);
      const seen = (downstream: string, head: string): SeenProposal[] => {
        const file = recordFile(downstream, head);
        if (!existsSync(file)) return [];
        const { header, body } = parseRecord(readFileSync(file, 'utf8'), file);
        return [{ body, state: header.state, draft: header.draft ?? false, status: header.status, url: file }];
      };
      // the downstreams' refs and the proposal records: what a run writes for its jobs (the
      // dashboard, beside them, is the dashboard scenarios' to check)
      const snapshot = () => {
        const { 'dashboard.md': _dashboard, ...records } = readTree(join(f.control, '.kdelta', 'proposals'));
        // a dashboard written again with the same text is a write too
        const dashboard = options.dashboard && existsSync(dashboardFile) ? [_dashboard, statSync(dashboardFile).mtimeMs] : [];
        return JSON.stringify([downstreams.map((d) => f.refs(d)), records, dashboard]);
      };
      let marked = '';
      const sf: ScenarioFleet = {
        forge: 'local',
        upstream: f.upstream,
        control: f.control,
        person: PERSON.name,
        writeControl: (files) => f.writeControl(files),
        publish: (files, tag) => f.publish(files, tag),
        run: (extra = {}) =>
          run({
            cwd: f.control,
            cacheDir: cacheDir(),
            env: { ...process.env, KDELTA_CACHE_DIR: cacheDir() },
            ...(options.copy ? { materialize: copyMaterialize } : {}),
            ...extra,
          }),
        git: (d, ...args) => git(f.downstream(d), ...args),
        tip: (d, branch) => tipIn(f.downstream(d), branch),
        show: (d, branch, path) => showIn(f.downstream(d), branch, path),
        isAncestor: (d, commit, of) => isAncestorIn(f.downstream(d), commit, of),
        async commitAs(d, branch, files, message = 'Edit by a human\n') {
          return asPerson(f.root, f.downstream(d), branch, (dir) => {
            writeTree(dir, files);
            execFileSync('git', ['add', '--all'], { cwd: dir });
            execFileSync('git', ['commit', '--quiet', '-m', message], { cwd: dir, env: personEnv() });
          });
        },
        proposals: seen,
        proposal(d, head) {
          const all = seen(d, head);
          expect(all, `no proposal of ${head} in ${d}`).not.toHaveLength(0);
          return all[all.length - 1]!;
        },
        async editBody(d, head, edit) {
          const file = recordFile(d, head);
          const text = readFileSync(file, 'utf8');
          const at = text.indexOf('\n---\n') + '\n---\n'.length;
          writeFileSync(file, text.slice(0, at) + edit(text.slice(at)));
        },
        async merge(d, head) {
          asPerson(f.root, f.downstream(d), 'main', (dir) => {
            execFileSync('git', ['merge', '--quiet', '--no-edit', `origin/${head}`], { cwd: dir, env: personEnv() });
          });
        },
        label() {
          throw new Error('the local forge has no labels');
        },
        reopen() {
          throw new Error('the local forge reopens nothing');
        },
        async decline(d, head) {
          git(f.downstream(d), 'update-ref', '-d', `refs/heads/${head}`);
        },
        dashboard: () => (existsSync(dashboardFile) ? readFileSync(dashboardFile, 'utf8') : undefined),
        editDashboard(edit) {
          writeFileSync(dashboardFile, edit(readFileSync(dashboardFile, 'utf8')));
        },
        github: undefined,
        mark() {
          marked = snapshot();
        },
        wrote: () => snapshot() !== marked,
      };
      return sf;
    },
  };
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

/** A person's token on the fake GitHub: the reviewer who edits, merges and closes pull requests. */
const PERSON_TOKEN = 'ghs_person';

function githubSetup(options: FakeGitHubOptions = {}): ScenarioSetup {
  const { cacheDir, track } = fleets();
  let fake: FakeGitHub | undefined;
  let owners = 0;
  beforeAll(async () => {
    fake = await startFakeGitHub({
      ...options,
      tokens: {
        ghs_fake: { login: 'kdelta-bot', permissions: 'all' },
        [PERSON_TOKEN]: { login: 'octo-human', permissions: 'all' },
        ...options.tokens,
      },
    });
  });
  afterAll(async () => {
    expect(fake!.violations).toEqual([]);
    await fake!.close();
  });
  return {
    forge: 'github',
    async fleet(downstreams, control = {}, options = {}) {
      const gh = fake!;
      const f = track(createFleet([]));
      const owner = `scenario-${++owners}`;
      const slug = (d: string) => `${owner}/${d}`;
      const controlRepo = slug('control');
      for (const d of downstreams) await gh.createRepo(slug(d), { defaultBranch: 'main', files: { 'README.md': `# ${d}\n` } });
      if (options.dashboard) await gh.createRepo(controlRepo, { defaultBranch: 'main', files: { 'README.md': '# control\n' } });
      const dashboardIssue = () => {
        const issues = gh.issues(controlRepo).filter((i) => i.title === 'kdelta dashboard');
        expect(issues.length, 'one dashboard issue at most').toBeLessThanOrEqual(1);
        return issues[0];
      };
      f.writeControl({
        'repositories.yaml': [
          repository('catalog', f.upstream),
          ...downstreams.map((d) => repository(d, `${gh.serverUrl}/${slug(d)}.git`, options.labels?.[d])),
        ].join('---\n'),
        ...control,
      });
      const env = (): NodeJS.ProcessEnv => {
        const e: NodeJS.ProcessEnv = { ...process.env, KDELTA_CACHE_DIR: cacheDir() };
        for (const k of GITHUB_VARIABLES) delete e[k];
        return e;
      };
      const pulls = (d: string, head: string) => gh.pulls(slug(d)).filter((p) => p.head.ref === head);
      const open = (d: string, head: string) => {
        const pull = pulls(d, head).find((p) => p.state === 'open');
        expect(pull, `no open pull request of ${head} in ${d}`).toBeDefined();
        return pull!;
      };
      const patch = async (d: string, number: number, fields: Record<string, unknown>) => {
        const res = await fetch(`${gh.apiUrl}/repos/${slug(d)}/pulls/${number}`, {
          method: 'PATCH',
          headers: { authorization: `token ${PERSON_TOKEN}`, 'content-type': 'application/json', accept: 'application/vnd.github+json' },
          body: JSON.stringify(fields),
        });
        expect(res.status).toBe(200);
      };
      const seen = (d: string, head: string): SeenProposal[] =>
        pulls(d, head).map((p) => {
          // the latest status of kdelta's context, as GitHub reads it
          const status = gh
            .statuses(slug(d), p.head.sha)
            .filter((s) => s.context === 'kdelta')
            .at(-1);
          return {
            body: p.body ?? '',
            state: p.merged ? 'merged' : p.state,
            draft: p.draft,
            status: status ? { state: status.state as ProposalStatus['state'], description: status.description ?? '' } : undefined,
            url: `${gh.serverUrl}/${slug(d)}/pull/${p.number}`,
          };
        });
      const sf: ScenarioFleet = {
        forge: 'github',
        upstream: f.upstream,
        control: f.control,
        person: PERSON.name,
        writeControl: (files) => f.writeControl(files),
        publish: (files, tag) => f.publish(files, tag),
        run: (extra = {}) =>
          run({
            cwd: f.control,
            cacheDir: cacheDir(),
            env: env(),
            forge: 'github',
            ...(options.dashboard ? { dashboard: { repository: controlRepo } } : {}),
            ...(options.copy ? { materialize: copyMaterialize } : {}),
            ...extra,
            github: {
              token: gh.token,
              apiUrl: gh.apiUrl,
              serverUrl: gh.serverUrl,
              pacing: { writeSpacing: false, retryAfterUnitMs: 20 },
              ...extra.github,
            },
          }),
        git: (d, ...args) => git(gh.gitDir(slug(d)), ...args),
        tip: (d, branch) => tipIn(gh.gitDir(slug(d)), branch),
        show: (d, branch, path) => showIn(gh.gitDir(slug(d)), branch, path),
        isAncestor: (d, commit, of) => isAncestorIn(gh.gitDir(slug(d)), commit, of),
        commitAs: (d, branch, files, message) => gh.humanCommit(slug(d), branch, { ...files }, message),
        proposals: seen,
        proposal(d, head) {
          const all = seen(d, head);
          expect(all, `no pull request of ${head} in ${d}`).not.toHaveLength(0);
          return all[all.length - 1]!;
        },
        async editBody(d, head, edit) {
          const pull = pulls(d, head).at(-1)!;
          // GitHub's page saves a body with CRLF line ends
          await patch(d, pull.number, { body: edit(pull.body ?? '').replace(/\r?\n/g, '\r\n') });
        },
        async merge(d, head) {
          await gh.mergePull(slug(d), open(d, head).number);
        },
        async reopen(d, head) {
          await patch(d, pulls(d, head).at(-1)!.number, { state: 'open' });
        },
        label(d, head, name) {
          gh.addLabel(slug(d), pulls(d, head).at(-1)!.number, name);
        },
        async decline(d, head) {
          await patch(d, open(d, head).number, { state: 'closed' });
        },
        dashboard: () => dashboardIssue()?.body ?? undefined,
        editDashboard(edit) {
          const issue = dashboardIssue()!;
          gh.editIssue(controlRepo, issue.number, edit(issue.body ?? ''));
        },
        github: { gh, slug, controlRepo },
        mark: () => gh.clearRequests(),
        wrote: () => gh.writes() > 0,
      };
      return sf;
    },
  };
}
