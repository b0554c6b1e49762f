import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { copyMaterialize, describeScenarios } from './harness.js';

/**
 * A proposal whose render failed, on every forge: proposed unrendered with a failure status and
 * the reason in its body, not ready (a draft on GitHub, never auto-merged); once it renders, the
 * same proposal is made ready; merged as it is, it no longer says "render failed".
 */

// an exec function in the variant's pipeline: refused without allowExec, so the render fails
const fnDir = mkdtempSync(join(tmpdir(), 'kdelta-scenario-fn-'));
afterAll(() => rmSync(fnDir, { recursive: true, force: true }));
const fn = join(fnDir, 'pass.sh');
writeFileSync(fn, '#!/bin/sh\ncat\n', { mode: 0o755 });
const WEB = packageVariant('web', 'cluster-01', `  pipeline:\n    mutators:\n    - exec: ${fn}\n`);

describeScenarios('a proposal whose render failed', {}, ({ forge, fleet }) => {
  it('is proposed unrendered with a failure status, not ready; a rerun writes nothing; once it renders, the same proposal is ready with a success status', async () => {
    const f = await fleet(['cluster-01'], { 'web.yaml': WEB });
    // on GitHub, auto-merge where the kdelta check is required: never for a failed render
    if (f.github) f.github.gh.requireStatusChecks(f.github.slug('cluster-01'), 'main', ['kdelta']);
    // the package copied as it is: what the render changes is all that changes
    const github = { github: { autoMerge: 'squash' as const }, materialize: copyMaterialize };
    const first = await f.run(github);
    expect(first.failed).toBe(0);
    expect(first.results[0]).toMatchObject({ action: 'proposed', renderFailure: { function: fn } });
    const failed = f.proposal('cluster-01', 'kdelta/web');
    expect(failed).toMatchObject({
      state: 'open',
      draft: true,
      status: { state: 'failure', description: expect.stringMatching(/^render failed: function .*pass\.sh/) },
    });
    expect(failed.body).toContain('### Render failed');
    if (f.github) expect(f.github.gh.pulls(f.github.slug('cluster-01'))[0]).toMatchObject({ auto_merge: null });
    const head = f.tip('cluster-01', 'kdelta/web');

    f.mark();
    expect((await f.run(github)).results[0]).toMatchObject({ action: 'unchanged', writes: false });
    expect(f.wrote()).toBe(false);

    const fixed = await f.run({ ...github, allowExec: true });
    expect(fixed.results[0]?.error).toBeUndefined();
    expect(fixed.results[0]).toMatchObject({ action: 'updated' });
    expect(fixed.results[0]?.renderFailure).toBeUndefined();
    const ready = f.proposal('cluster-01', 'kdelta/web');
    expect(ready).toMatchObject({ draft: false, status: { state: 'success' } });
    expect(ready.body).not.toContain('Render failed');
    expect(f.proposals('cluster-01', 'kdelta/web')).toHaveLength(1);
    // the render changed nothing in the files (the function passes them through): the same commit
    // gets a new status, the latest of its context
    expect(f.tip('cluster-01', 'kdelta/web')).toBe(head);
    if (f.github) expect(f.github.gh.pulls(f.github.slug('cluster-01'))[0]).toMatchObject({ auto_merge: { merge_method: 'squash' } });
  });

  it('merged as it is (unrendered): the run and the proposal no longer say "render failed"', async () => {
    const f = await fleet(['cluster-01'], { 'web.yaml': WEB });
    expect((await f.run()).results[0]).toMatchObject({ action: 'proposed', renderFailure: { function: fn } });
    const record = join(f.control, '.kdelta', 'proposals', 'cluster-01', 'web.md');
    if (forge === 'local') expect(readFileSync(record, 'utf8')).toContain('\nrenderFailed: true\n');
    // a reviewer merges it as it is (on GitHub the draft made ready first, as its page asks)
    if (f.github) {
      const [pull] = f.github.gh.pulls(f.github.slug('cluster-01'));
      const res = await fetch(`${f.github.gh.apiUrl}/graphql`, {
        method: 'POST',
        headers: { authorization: `token ${f.github.gh.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }',
          variables: { id: pull!.node_id },
        }),
      });
      expect(res.status).toBe(200);
    }
    await f.merge('cluster-01', 'kdelta/web');
    for (let i = 0; i < 2; i++) {
      const next = await f.run();
      expect(next.failed).toBe(0);
      expect(next.results[0]).toMatchObject({ action: 'up-to-date' });
      expect(next.results[0]?.renderFailure).toBeUndefined();
      expect(next.results[0]?.message ?? '').not.toContain('render failed');
    }
    expect(f.proposal('cluster-01', 'kdelta/web').state).toBe('merged');
    if (forge === 'local') expect(readFileSync(record, 'utf8')).not.toContain('\nrenderFailed: true\n');
  });
});
