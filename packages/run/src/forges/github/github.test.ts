import { startFakeGitHub, type FakeGitHub } from '@kdelta/fake-github';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Budget } from '../budget.js';
import { forgeSuite } from '../forge-suite.js';
import { type ClosedFacts, PROPOSE_AGAIN_LABEL } from '../forge.js';
import { type CloseMarks, createGitHubForge, decodeBody, encodeBody, githubToken } from './github.js';

let gh: FakeGitHub;
beforeAll(async () => {
  gh = await startFakeGitHub();
});
afterAll(async () => {
  expect(gh.violations).toEqual([]);
  await gh.close();
});

const fast = { writeSpacing: false, retryAfterUnitMs: 20 } as const;
let org = 0;
let current = '';

/** A fresh owner per forge, with cluster-01 (branches kdelta/web, kdelta/api) and cluster-02 (kdelta/web). */
async function freshRepos(): Promise<void> {
  current = `suite-${++org}`;
  for (const [name, heads] of [
    ['cluster-01', ['kdelta/web', 'kdelta/api']],
    ['cluster-02', ['kdelta/web']],
  ] as const) {
    await gh.createRepo(`${current}/${name}`, { defaultBranch: 'main', files: { 'README.md': `# ${name}\n` } });
    for (const head of heads) await gh.humanCommit(`${current}/${name}`, head, { 'change.txt': `${head}\n` });
  }
}

forgeSuite(
  'github',
  async () => {
    await freshRepos();
    return createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: fast });
  },
  { repoOf: (d) => `${gh.serverUrl}/${current}/${d}.git`, controlRepository: () => `${current}/cluster-01` },
);

describe('github forge', () => {
  it('keeps the fingerprint in the body, hidden, when the body has no metadata block of its own', () => {
    const stored = encodeBody('body two\n', 'f2');
    expect(stored).toBe('body two\n<!-- kdelta-fingerprint: f2 -->\n');
    expect(decodeBody(stored)).toEqual({ body: 'body two\n', fingerprint: 'f2' });
    // a body that carries its fingerprint itself (the run's metadata block) is stored as it is
    const withBlock = 'text\n<!-- kdelta: {"fingerprint":"f1"} -->\n';
    const fingerprintIn = (body: string) => /"fingerprint":"([^"]+)"/.exec(body)?.[1];
    expect(encodeBody(withBlock, 'f1', fingerprintIn)).toBe(withBlock);
    expect(decodeBody(withBlock, fingerprintIn)).toEqual({ body: withBlock, fingerprint: 'f1' });
  });

  it("the dashboard is kdelta's own issue: one of the same title without the marker is a person's, left alone", async () => {
    await freshRepos();
    const forge = createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: fast });
    const repository = `${current}/cluster-01`;
    const target = { repository, name: 'dashboard', title: 'kdelta dashboard', marker: '<!-- kdelta-dashboard: dashboard -->' };
    const kit = { authorization: `token ${gh.token}`, 'content-type': 'application/json' };
    await fetch(`${gh.apiUrl}/repos/${repository}/issues`, {
      method: 'POST',
      headers: kit,
      body: JSON.stringify({ title: 'kdelta dashboard', body: 'our own notes' }),
    });
    expect(await forge.readDashboard!(target)).toBeUndefined();
    const made = await forge.writeDashboard!(target, `fleet\n${target.marker}\n`, undefined);
    expect(await forge.readDashboard!(target)).toEqual(made);
    expect(gh.issues(repository).map((i) => i.body)).toEqual(['our own notes', `fleet\n${target.marker}\n`]);
    await expect(forge.readDashboard!({ ...target, repository: 'not a slug' })).rejects.toThrow(/must be owner\/name/);
  });

  it('needs a token: GITHUB_TOKEN, else GH_TOKEN, else a clear error', () => {
    expect(githubToken({ env: { GITHUB_TOKEN: 'a', GH_TOKEN: 'b' } })).toBe('a');
    expect(githubToken({ env: { GH_TOKEN: 'b' } })).toBe('b');
    expect(() => createGitHubForge({ env: {} })).toThrow(/the github forge needs a token: set GITHUB_TOKEN .* or GH_TOKEN/);
  });

  it('reads the open pull requests of a repository once and counts writes against the budget', async () => {
    await freshRepos();
    const budget = new Budget(100);
    const forge = createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: fast, budget });
    const repo = `${gh.serverUrl}/${current}/cluster-01`;
    gh.clearRequests();
    for (const head of ['kdelta/web', 'kdelta/api', 'kdelta/web', 'kdelta/none']) {
      await forge.find({ downstream: 'cluster-01', repo, head, base: 'main' });
    }
    expect(gh.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      expect.stringMatching(new RegExp(`^GET (/api/v3)?/repos/${current}/cluster-01/pulls$`)),
    ]);
    await forge.upsert({ downstream: 'cluster-01', repo, head: 'kdelta/web', base: 'main', title: 't', body: 'b\n', fingerprint: 'f' });
    expect(budget.used).toBe(gh.writes());
    expect(budget.used).toBeGreaterThan(0);
    // the new pull request is in the run's list: finding it again reads nothing
    gh.clearRequests();
    expect(await forge.find({ downstream: 'cluster-01', repo, head: 'kdelta/web', base: 'main' })).toMatchObject({ title: 't' });
    expect(gh.requests).toEqual([]);
  });

  it('a repository elsewhere is a clear error naming it and the server', async () => {
    const forge = createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: fast });
    await expect(forge.find({ downstream: 'x', repo: 'https://gitlab.com/org/x.git', head: 'kdelta/web', base: 'main' })).rejects.toThrow(
      `repository "https://gitlab.com/org/x.git" is on https://gitlab.com: the github forge opens pull requests on ${gh.serverUrl} only`,
    );
  });

  describe('declines', () => {
    /** The run's metadata block, reduced to what the forge is given: a fingerprint and who closed it. */
    const block = (fingerprint: string, closedBy?: string) =>
      `<!-- kdelta: ${JSON.stringify({ fingerprint, ...(closedBy ? { closedBy } : {}) })} -->`;
    const closes: CloseMarks = {
      mark: (body, state) =>
        body.replace(
          /<!-- kdelta: (\{.*\}) -->/,
          (_, json: string) => `<!-- kdelta: ${JSON.stringify({ ...JSON.parse(json), closedBy: state })} -->`,
        ),
      read: (body) => {
        const m = /<!-- kdelta: (\{.*\}) -->/.exec(body);
        if (!m) return undefined;
        const by = (JSON.parse(m[1]!) as { closedBy?: 'closed' | 'merged' }).closedBy;
        return by ? { by: 'kdelta', state: by } : { by: 'person' };
      },
      // the protocol's decision, reduced: the forge only reports the facts it is given from
      stateOf: (facts) => {
        reported.push(facts);
        if (facts.merged) return 'merged';
        if (facts.closedBy?.by === 'kdelta') return facts.closedBy.state;
        return facts.closedBy?.by === 'person' && !facts.labels.includes(PROPOSE_AGAIN_LABEL) ? 'declined' : 'closed';
      },
    };
    const reported: ClosedFacts[] = [];
    const fingerprintIn = (body: string) => /"fingerprint":"([^"]+)"/.exec(body)?.[1];
    const forgeWith = () =>
      createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: fast, fingerprintIn, closes });

    /** A person closes pull request `n` on GitHub, unmerged. */
    async function personCloses(n: number): Promise<void> {
      const res = await fetch(`${gh.apiUrl}/repos/${current}/cluster-01/pulls/${n}`, {
        method: 'PATCH',
        headers: { authorization: `token ${gh.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ state: 'closed' }),
      });
      expect(res.status).toBe(200);
    }

    it('a pull request a person closed unmerged is declined; one kdelta closed is not, and its body says kdelta closed it', async () => {
      await freshRepos();
      const repo = `${gh.serverUrl}/${current}/cluster-01`;
      const web = { downstream: 'cluster-01', repo, head: 'kdelta/web', base: 'main' };
      const api = { ...web, head: 'kdelta/api' };
      const first = forgeWith();
      const opened = await first.upsert({ ...web, title: 'web', body: `web\n${block('f1')}\n`, fingerprint: 'f1' });
      const other = await first.upsert({ ...api, title: 'api', body: `api\n${block('f2')}\n`, fingerprint: 'f2' });
      await personCloses(Number(opened.proposal.id));
      await first.close(other.proposal, 'closed');
      const closedByKdelta = gh.pulls(`${current}/cluster-01`).find((p) => p.head.ref === 'kdelta/api');
      expect(closedByKdelta?.body).toContain('"closedBy":"closed"');

      // the next run: one read of the open list, then one closed list per target with no open pull request
      const next = forgeWith();
      gh.clearRequests();
      expect(await next.declined!(web)).toMatchObject({ state: 'declined', fingerprint: 'f1', id: opened.proposal.id, title: 'web' });
      expect(await next.declined!(api)).toBeUndefined();
      expect(await next.declined!(web)).toMatchObject({ state: 'declined' });
      const reads = gh.requests.map((r) => `${r.path} ${r.query.state ?? ''} ${r.query.head ?? ''}`);
      expect(reads).toEqual([
        expect.stringMatching(/\/pulls open $/),
        expect.stringMatching(new RegExp(`/pulls closed ${current}:kdelta/web$`)),
        expect.stringMatching(new RegExp(`/pulls closed ${current}:kdelta/api$`)),
      ]);
      expect(Object.fromEntries((await next.list()).map((p) => [p.head, p.state]))).toEqual({
        'kdelta/web': 'declined',
        'kdelta/api': 'closed',
      });

      // the forge reports the labels a person put on it (the protocol reads the one that undoes a decline)
      gh.addLabel(`${current}/cluster-01`, Number(opened.proposal.id), PROPOSE_AGAIN_LABEL);
      reported.length = 0;
      expect(await forgeWith().declined!(web)).toBeUndefined();
      expect(reported).toEqual([{ merged: false, closedBy: { by: 'person' }, labels: [PROPOSE_AGAIN_LABEL] }]);
    });

    it('a target with an open pull request reads no closed list; without close marks the forge keeps no declines', async () => {
      await freshRepos();
      const repo = `${gh.serverUrl}/${current}/cluster-01`;
      const web = { downstream: 'cluster-01', repo, head: 'kdelta/web', base: 'main' };
      const forge = forgeWith();
      await forge.upsert({ ...web, title: 'web', body: `web\n${block('f1')}\n`, fingerprint: 'f1' });
      gh.clearRequests();
      expect(await forge.declined!(web)).toBeUndefined();
      expect(gh.requests).toEqual([]);
      expect(
        createGitHubForge({ token: gh.token, apiUrl: gh.apiUrl, serverUrl: gh.serverUrl, env: {}, pacing: fast }).declined,
      ).toBeUndefined();
    });
  });
});
