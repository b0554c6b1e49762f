import { describe, expect, it } from 'vitest';
import type { DashboardTarget, Forge, ProposalInput } from './forge.js';

/**
 * What every forge must do, as tests: the local forge runs them on files, the GitHub forge on a
 * test double of the API. `make` returns a fresh, empty forge for each test.
 */
export function forgeSuite(
  name: string,
  make: () => Promise<Forge>,
  options: {
    /** The repository URL of a downstream in the forge `make` returned last (default `/repos/<downstream>.git`). */
    repoOf?: (downstream: string) => string;
    /** The control repository (`owner/name`) of the forge `make` returned last, for its dashboard. */
    controlRepository?: () => string;
  } = {},
): void {
  const repoOf = options.repoOf ?? ((d: string) => `/repos/${d}.git`);
  const input = (over: Partial<ProposalInput> = {}): ProposalInput => ({
    downstream: 'cluster-01',
    repo: repoOf('cluster-01'),
    head: 'kdelta/web',
    base: 'main',
    title: 'kdelta: add web',
    body: 'body one\n<!-- kdelta: {"fingerprint":"f1"} -->\n',
    fingerprint: 'f1',
    ...over,
  });

  describe(`forge contract: ${name}`, () => {
    it('finds nothing before a proposal is opened', async () => {
      const forge = await make();
      expect(await forge.find(input())).toBeUndefined();
      expect(await forge.list()).toEqual([]);
    });

    it('opens a proposal, then finds it by head and base', async () => {
      const forge = await make();
      const opened = await forge.upsert(input());
      expect(opened).toMatchObject({
        created: true,
        changed: true,
        proposal: { state: 'open', title: 'kdelta: add web', fingerprint: 'f1' },
      });
      const found = await forge.find(input());
      expect(found).toMatchObject({ id: opened.proposal.id, head: 'kdelta/web', base: 'main', body: input().body, state: 'open' });
      expect(await forge.find(input({ base: 'release' }))).toBeUndefined();
      expect(await forge.find(input({ head: 'kdelta/api' }))).toBeUndefined();
    });

    it('says when a proposal was opened, found and listed alike, and keeps it when the proposal is updated', async () => {
      const forge = await make();
      const before = Date.now() - 1000;
      const opened = await forge.upsert(input());
      const createdAt = opened.proposal.createdAt;
      expect(createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(Date.parse(createdAt!)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(createdAt!)).toBeLessThanOrEqual(Date.now() + 1000);
      expect((await forge.find(input()))?.createdAt).toBe(createdAt);
      const updated = await forge.upsert(input({ body: 'body two\n', fingerprint: 'f2' }));
      expect(updated.proposal.createdAt).toBe(createdAt);
      expect((await forge.list()).map((p) => p.createdAt)).toEqual([createdAt]);
    });

    it('updates the open proposal instead of adding one; the same text changes nothing', async () => {
      const forge = await make();
      const first = await forge.upsert(input());
      const same = await forge.upsert(input());
      expect(same).toMatchObject({ created: false, changed: false });
      const second = await forge.upsert(input({ body: 'body two\n', fingerprint: 'f2', title: 'kdelta: update web' }));
      expect(second).toMatchObject({ created: false, changed: true, proposal: { id: first.proposal.id } });
      expect(await forge.find(input())).toMatchObject({ body: 'body two\n', fingerprint: 'f2', title: 'kdelta: update web' });
      expect(await forge.list()).toHaveLength(1);
    });

    it('closes a proposal (closed or merged): find no longer returns it, list shows its state', async () => {
      const forge = await make();
      const { proposal } = await forge.upsert(input());
      expect(await forge.close(proposal)).toMatchObject({ state: 'closed' });
      expect(await forge.find(input())).toBeUndefined();
      expect((await forge.list()).map((p) => p.state)).toEqual(['closed']);
      const reopened = await forge.upsert(input());
      expect(reopened.created).toBe(true);
      await forge.close(reopened.proposal, 'merged');
      expect((await forge.list()).map((p) => p.state)).toEqual(['merged']);
    });

    it('reports facts and decides nothing: head, base, body, fingerprint and labels as written; a close is what the run closed it as', async () => {
      const forge = await make();
      const { proposal } = await forge.upsert(input({ review: { ready: true, draft: false, autoMerge: false } }));
      const found = await forge.find(input());
      expect(found).toMatchObject({ head: 'kdelta/web', base: 'main', body: input().body, fingerprint: 'f1', state: 'open' });
      expect(found?.labels ?? []).toEqual([]);
      expect(found?.autoMerge ?? false).toBe(false);
      // declining is the run's decision (propose/protocol.ts): the forge closes it as told
      expect(await forge.close(proposal, 'declined')).toMatchObject({ state: 'declined', fingerprint: 'f1', body: input().body });
      expect(await forge.find(input())).toBeUndefined();
    });

    it('records a status on the proposal', async () => {
      const forge = await make();
      const { proposal } = await forge.upsert(input());
      await forge.setStatus(proposal, { state: 'failure', description: '2 conflicts' });
      expect((await forge.find(input()))?.status).toEqual({ state: 'failure', description: '2 conflicts' });
    });

    it('opens a proposal whose render failed, and updates it once the render succeeds', async () => {
      const forge = await make();
      const failed = await forge.upsert(input({ renderFailed: true }));
      expect(failed).toMatchObject({ created: true, proposal: { state: 'open' } });
      await forge.setStatus(failed.proposal, { state: 'failure', description: 'render failed' });
      const fixed = await forge.upsert(input({ body: 'body two\n', fingerprint: 'f1' }));
      expect(fixed).toMatchObject({ created: false, changed: true, proposal: { id: failed.proposal.id } });
      expect(await forge.find(input())).toMatchObject({ body: 'body two\n', state: 'open' });
      expect(await forge.list()).toHaveLength(1);
    });

    it('opens a proposal as a draft when the run says so, marks it ready when the run says so, and leaves it so when the run does not say', async () => {
      const forge = await make();
      const held = { ready: false, draft: true, autoMerge: false };
      await forge.upsert(input({ review: held }));
      expect((await forge.find(input()))?.draft).toBe(true);
      await forge.upsert(input({ body: 'body two\n', review: { ready: true, draft: false, autoMerge: true } }));
      expect((await forge.find(input()))?.draft).toBeFalsy();
      await forge.upsert(input({ body: 'body three\n', review: held }));
      await forge.upsert(input({ body: 'body four\n' }));
      expect(await forge.find(input())).toMatchObject({ body: 'body four\n', draft: true });
      // the run's word on the draft is carried out, whatever the readiness (a `never` draft policy)
      await forge.upsert(input({ body: 'body five\n', review: { ready: false, draft: false, autoMerge: false } }));
      expect((await forge.find(input()))?.draft).toBeFalsy();
    });

    it('keeps a dashboard: none at first, written, read back, rewritten in place; another target is another dashboard', async () => {
      const forge = await make();
      const target = (name: string): DashboardTarget => ({
        repository: options.controlRepository?.(),
        name,
        title: `kdelta ${name}`,
        marker: `<!-- kdelta-dashboard: ${name} -->`,
      });
      const main = target('dashboard');
      expect(await forge.readDashboard!(main)).toBeUndefined();
      const made = await forge.writeDashboard!(main, `one\n${main.marker}\n`, undefined);
      expect(await forge.readDashboard!(main)).toEqual(made);
      expect(made.body).toBe(`one\n${main.marker}\n`);
      const again = await forge.writeDashboard!(main, `two\n${main.marker}\n`, made);
      expect(again).toMatchObject({ id: made.id, url: made.url, body: `two\n${main.marker}\n` });
      expect((await forge.readDashboard!(main))?.body).toBe(`two\n${main.marker}\n`);
      expect(await forge.readDashboard!(target('dashboard-shard-1-of-2'))).toBeUndefined();
      // a dashboard is no proposal
      expect(await forge.list()).toEqual([]);
    });

    it('keeps proposals of different downstreams and heads apart', async () => {
      const forge = await make();
      await forge.upsert(input());
      await forge.upsert(input({ head: 'kdelta/api', title: 'api' }));
      await forge.upsert(input({ downstream: 'cluster-02', repo: repoOf('cluster-02'), title: 'other' }));
      expect((await forge.list()).map((p) => `${p.downstream} ${p.head} ${p.title}`).sort()).toEqual([
        'cluster-01 kdelta/api api',
        'cluster-01 kdelta/web kdelta: add web',
        'cluster-02 kdelta/web other',
      ]);
    });
  });
}
