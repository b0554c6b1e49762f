import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeGitHub, type FakeGitHub } from '@kdelta/fake-github';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFleet, packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { getPackageFiles, type Materialize, run, type RunOptions } from '@kdelta/run';
import type { Io } from '../../src/command.js';
import { main } from '../../src/main.js';

/**
 * `kdelta run` authenticated as a GitHub App: an installation token per owner of the downstream
 * repositories, minted from the App's key, renewed before it expires, never shown.
 */

const copyMaterialize: Materialize = async (input) => {
  const files = await getPackageFiles(input);
  return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
};

const APP_ID = 4242;
// GitHub hands out PKCS#1 keys ("BEGIN RSA PRIVATE KEY")
const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
/** The fake's and the forge's time: moved by the tests, never slept. */
let now = Date.now();
const clock = {
  now: () => now,
  sleep: async (ms: number) => {
    now += ms;
  },
};

let gh: FakeGitHub;
const fleets: Fleet[] = [];
const cacheDir = mkdtempSync(join(tmpdir(), 'kdelta-ghapp-cache-'));
beforeAll(async () => {
  gh = await startFakeGitHub({
    clock,
    apps: [
      {
        id: APP_ID,
        clientId: 'Iv23liFake',
        slug: 'kdelta-fleet',
        privateKey,
        installations: { 'team-a': { id: 11 }, 'team-b': { id: 22 } },
      },
    ],
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

let n = 0;

/** Downstreams `<owner>/<name>` on the fake GitHub, one variant each (named after the owner and repository). */
async function fleet(downstreams: readonly string[]): Promise<Fleet & { variants: string[] }> {
  const f = createFleet([]);
  fleets.push(f);
  const suffix = `-${++n}`;
  const repos: string[] = [];
  const variants: string[] = [];
  const control: Record<string, string> = {};
  for (const d of downstreams) {
    const name = `${d}${suffix}`;
    await gh.createRepo(name, { defaultBranch: 'main' });
    const label = name.replace('/', '-');
    repos.push(repository(label, `${gh.serverUrl}/${name}.git`));
    control[`${label}.yaml`] = packageVariant(`web-${label}`, label);
    variants.push(`web-${label}`);
  }
  f.writeControl({ 'repositories.yaml': [repository('catalog', f.upstream), ...repos].join('---\n'), ...control });
  return Object.assign(f, { variants });
}

function cleanEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, KDELTA_CACHE_DIR: cacheDir, ...extra };
  for (const k of ['GITHUB_TOKEN', 'GH_TOKEN', 'KDELTA_GIT_TOKEN', 'GITHUB_API_URL', 'GITHUB_SERVER_URL', 'GITHUB_GRAPHQL_URL'])
    if (!(k in extra)) delete env[k];
  for (const k of Object.keys(env)) if (k.startsWith('KDELTA_GITHUB_APP_') && !(k in extra)) delete env[k];
  return env;
}

function opts(f: Fleet, extra: Partial<RunOptions> = {}): RunOptions {
  return {
    cwd: f.control,
    cacheDir,
    env: cleanEnv(),
    forge: 'github',
    materialize: copyMaterialize,
    concurrency: 1,
    github: {
      app: { appId: String(APP_ID), privateKey },
      apiUrl: gh.apiUrl,
      serverUrl: gh.serverUrl,
      pacing: { writeSpacing: false, retryAfterUnitMs: 20 },
      clock,
    },
    ...extra,
  };
}

/** The actors of the API requests on one owner's repositories. */
const actorsOn = (owner: string) =>
  new Set(gh.requests.filter((r) => r.path.startsWith(`/repos/${owner}`) && !r.operationId?.startsWith('apps/')).map((r) => r.actor));

describe('kdelta run as a GitHub App', () => {
  it('two owners, two installations: each repository gets its own owner’s installation token; an owner without one fails its variant alone', async () => {
    const f = await fleet(['team-a/cluster-01', 'team-b/cluster-02', 'team-c/cluster-03']);
    gh.clearRequests();
    const masked: string[] = [];
    const report = await run(opts(f, { github: { ...opts(f).github, onToken: (t) => masked.push(t) } }));
    const byVariant = Object.fromEntries(report.results.map((r) => [r.variant, r]));
    expect(byVariant[f.variants[0]!]?.action).toBe('proposed');
    expect(byVariant[f.variants[1]!]?.action).toBe('proposed');
    expect(byVariant[f.variants[2]!]).toMatchObject({
      action: 'failed',
      error: expect.stringMatching(/the GitHub App 4242 is not installed on team-c/),
    });
    expect(gh.pulls(`team-a/cluster-01-${n}`)).toHaveLength(1);
    expect(gh.pulls(`team-b/cluster-02-${n}`)).toHaveLength(1);
    expect(actorsOn('team-a')).toEqual(new Set(['installation:11']));
    expect(actorsOn('team-b')).toEqual(new Set(['installation:22']));
    // every token minted was handed over for masking, and appears in no result
    const minted = [...gh.installationTokens.values()].flat();
    expect(masked).toEqual(expect.arrayContaining(minted));
    expect(JSON.stringify(report)).not.toMatch(/ghs_inst/);
  });

  it('a token that expires mid-run is renewed before it does', async () => {
    const f = await fleet(['team-a/one', 'team-a/two', 'team-a/three']);
    const before = gh.installationTokens.get(11)?.length ?? 0;
    gh.clearRequests();
    // each variant takes 40 minutes of the fake's time: the hour-long token runs out after the second
    const report = await run(opts(f, { onProgress: (e) => void (e.type === 'done' && (now += 40 * 60_000)) }));
    expect(report.results.map((r) => r.action)).toEqual(['proposed', 'proposed', 'proposed']);
    expect(gh.requests.filter((r) => r.status === 401)).toEqual([]);
    expect((gh.installationTokens.get(11)?.length ?? 0) - before).toBeGreaterThanOrEqual(2);
  });

  it('from a terminal, with the App in the environment: no token is ever printed or written', async () => {
    const f = await fleet(['team-b/cluster-09']);
    const out = { stdout: '', stderr: '' };
    const io: Io = {
      stdout: (t) => void (out.stdout += t),
      stderr: (t) => void (out.stderr += t),
      cwd: f.control,
      env: cleanEnv({
        KDELTA_GITHUB_APP_ID: String(APP_ID),
        KDELTA_GITHUB_APP_PRIVATE_KEY: privateKey,
        GITHUB_API_URL: gh.apiUrl,
        GITHUB_SERVER_URL: gh.serverUrl,
      }),
    };
    expect(await main(['run', '--forge', 'github', '--report', 'report.json'], io)).toBe(0);
    expect(gh.pulls(`team-b/cluster-09-${n}`)).toHaveLength(1);
    const texts = [out.stdout, out.stderr, ...allFiles(f.root), ...allFiles(cacheDir)];
    for (const token of [...gh.installationTokens.values()].flat()) for (const text of texts) expect(text).not.toContain(token);
    for (const text of texts) expect(text).not.toContain('PRIVATE KEY');
  });
});

function allFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else if (s.isFile()) out.push(readFileSync(p, 'latin1'));
    }
  };
  walk(root);
  return out;
}
