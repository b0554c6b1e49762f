import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { packageVariant, repository, type Fleet } from '@kdelta/test-support';
import { run, type RunOptions } from '@kdelta/run';
import type { Io } from '../../src/command.js';
import { main } from '../../src/main.js';
import { allFiles, copyMaterialize, githubFleets } from './__fixtures__/github-fleet.js';

/**
 * `kdelta run` authenticated as a GitHub App: an installation token per owner of the downstream
 * repositories, minted from the App's key, renewed before it expires, never shown.
 */

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

const hub = githubFleets({
  fake: {
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
  },
});
const { cacheDir } = hub;

let n = 0;

/** Downstreams `<owner>/<name>` on the fake GitHub, one variant each (named after the owner and repository). */
async function fleet(downstreams: readonly string[]): Promise<Fleet & { variants: string[] }> {
  const f = hub.bareFleet();
  const suffix = `-${++n}`;
  const repos: string[] = [];
  const variants: string[] = [];
  const control: Record<string, string> = {};
  for (const d of downstreams) {
    const name = `${d}${suffix}`;
    await hub.gh.createRepo(name, { defaultBranch: 'main' });
    const label = name.replace('/', '-');
    repos.push(repository(label, `${hub.gh.serverUrl}/${name}.git`));
    control[`${label}.yaml`] = packageVariant(`web-${label}`, label);
    variants.push(`web-${label}`);
  }
  f.writeControl({ 'repositories.yaml': [repository('catalog', f.upstream), ...repos].join('---\n'), ...control });
  return Object.assign(f, { variants });
}

/** The environment without any GitHub or GitHub App of the machine running the tests, plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env = hub.cleanEnv(extra);
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
      apiUrl: hub.gh.apiUrl,
      serverUrl: hub.gh.serverUrl,
      pacing: { writeSpacing: false, retryAfterUnitMs: 20 },
      clock,
    },
    ...extra,
  };
}

/** The actors of the API requests on one owner's repositories. */
const actorsOn = (owner: string) =>
  new Set(hub.gh.requests.filter((r) => r.path.startsWith(`/repos/${owner}`) && !r.operationId?.startsWith('apps/')).map((r) => r.actor));

describe('kdelta run as a GitHub App', () => {
  it('two owners, two installations: each repository gets its own owner’s installation token; an owner without one fails its variant alone', async () => {
    const f = await fleet(['team-a/cluster-01', 'team-b/cluster-02', 'team-c/cluster-03']);
    hub.gh.clearRequests();
    const masked: string[] = [];
    const report = await run(opts(f, { github: { ...opts(f).github, onToken: (t) => masked.push(t) } }));
    const byVariant = Object.fromEntries(report.results.map((r) => [r.variant, r]));
    expect(byVariant[f.variants[0]!]?.action).toBe('proposed');
    expect(byVariant[f.variants[1]!]?.action).toBe('proposed');
    expect(byVariant[f.variants[2]!]).toMatchObject({
      action: 'failed',
      error: expect.stringMatching(/the GitHub App 4242 is not installed on team-c/),
    });
    expect(hub.gh.pulls(`team-a/cluster-01-${n}`)).toHaveLength(1);
    expect(hub.gh.pulls(`team-b/cluster-02-${n}`)).toHaveLength(1);
    expect(actorsOn('team-a')).toEqual(new Set(['installation:11']));
    expect(actorsOn('team-b')).toEqual(new Set(['installation:22']));
    // every token minted was handed over for masking, and appears in no result
    const minted = [...hub.gh.installationTokens.values()].flat();
    expect(masked).toEqual(expect.arrayContaining(minted));
    expect(JSON.stringify(report)).not.toMatch(/ghs_inst/);
  });

  it('a token that expires mid-run is renewed before it does', async () => {
    const f = await fleet(['team-a/one', 'team-a/two', 'team-a/three']);
    const before = hub.gh.installationTokens.get(11)?.length ?? 0;
    hub.gh.clearRequests();
    // each variant takes 40 minutes of the fake's time: the hour-long token runs out after the second
    const report = await run(opts(f, { onProgress: (e) => void (e.type === 'done' && (now += 40 * 60_000)) }));
    expect(report.results.map((r) => r.action)).toEqual(['proposed', 'proposed', 'proposed']);
    expect(hub.gh.requests.filter((r) => r.status === 401)).toEqual([]);
    expect((hub.gh.installationTokens.get(11)?.length ?? 0) - before).toBeGreaterThanOrEqual(2);
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
        GITHUB_API_URL: hub.gh.apiUrl,
        GITHUB_SERVER_URL: hub.gh.serverUrl,
      }),
    };
    expect(await main(['run', '--forge', 'github', '--report', 'report.json'], io)).toBe(0);
    expect(hub.gh.pulls(`team-b/cluster-09-${n}`)).toHaveLength(1);
    const texts = [out.stdout, out.stderr, ...allFiles(f.root), ...allFiles(cacheDir)];
    for (const token of [...hub.gh.installationTokens.values()].flat()) for (const text of texts) expect(text).not.toContain(token);
    for (const text of texts) expect(text).not.toContain('PRIVATE KEY');
  });
});
