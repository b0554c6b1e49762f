import { type FakeGitHub, startFakeGitHub } from '@kdelta/fake-github';
import { onTestFinished } from 'vitest';
import { createFleet, type Fleet, packageVariant, repository } from './fleet.js';

// The two fleets the Action's tests run on, removed when the test that made them ends: variants web
// (→ cluster-01) and api (→ cluster-02) of the upstream package, with the downstreams on disk
// (forge local) or on a fake GitHub on 127.0.0.1 (REST, GraphQL, git over HTTP).

/** Inputs of a run on the local fleet: proposals as files under the control repository's .kdelta/proposals. */
export const LOCAL = { forge: 'local', mode: 'variants', config: '.kdelta' };

/** Downstreams cluster-01 and cluster-02 as bare repositories on disk. */
export function localFleet(): Fleet {
  const f = createFleet(['cluster-01', 'cluster-02']);
  onTestFinished(() => f.cleanup());
  f.writeControl({
    'repositories.yaml': [
      repository('catalog', f.upstream),
      repository('cluster-01', f.downstream('cluster-01'), { env: 'prod' }),
      repository('cluster-02', f.downstream('cluster-02'), { env: 'prod' }),
    ].join('---\n'),
    'web.yaml': packageVariant('web', 'cluster-01'),
    'api.yaml': packageVariant('api', 'cluster-02'),
  });
  return f;
}

export interface GitHubFleet {
  readonly f: Fleet;
  readonly gh: FakeGitHub;
  /** The runner's variables that point the Action at the fake GitHub. */
  readonly env: Record<string, string>;
}

type Tokens = Parameters<typeof startFakeGitHub>[0] extends infer O ? (O extends { tokens?: infer T } ? T : never) : never;

/** Downstreams org/cluster-01 and org/cluster-02 on a fake GitHub (with `tokens` when given). */
export async function githubFleet(tokens?: Tokens, options: Parameters<typeof startFakeGitHub>[0] = {}): Promise<GitHubFleet> {
  const gh = await startFakeGitHub({ ...options, ...(tokens ? { tokens } : {}) });
  onTestFinished(() => gh.close());
  const f = createFleet([]);
  onTestFinished(() => f.cleanup());
  const urls: string[] = [];
  for (const name of ['org/cluster-01', 'org/cluster-02'])
    urls.push((await gh.createRepo(name, { defaultBranch: 'main', files: { 'README.md': `# ${name}\n` } })).cloneUrl);
  f.writeControl({
    'repositories.yaml': [repository('catalog', f.upstream), repository('cluster-01', urls[0]!), repository('cluster-02', urls[1]!)].join(
      '---\n',
    ),
    'web.yaml': packageVariant('web', 'cluster-01'),
    'api.yaml': packageVariant('api', 'cluster-02'),
  });
  return { f, gh, env: { GITHUB_API_URL: gh.apiUrl, GITHUB_SERVER_URL: gh.serverUrl, GITHUB_GRAPHQL_URL: gh.graphqlUrl } };
}

/** Inputs of a run on the GitHub fleet, with `extra` added. */
export function githubInputs(s: GitHubFleet, extra: Record<string, string> = {}): Record<string, string> {
  return { forge: 'github', mode: 'variants', token: s.gh.token, labels: 'kdelta, fleet', ...extra };
}
