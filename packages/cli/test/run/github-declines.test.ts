import { describe, expect, it } from 'vitest';
import { type Fleet, packageVariant } from '@kdelta/test-support';
import { githubFleets } from './__fixtures__/github-fleet.js';

/** People say no on GitHub: a pull request closed unmerged by a person is declined. */

const hub = githubFleets({ owner: 'decline' });
const { kdelta } = hub;

/** cluster-01 on the fake GitHub, `slug` its name there. */
async function fleet(): Promise<Fleet & { slug: string }> {
  const f = await hub.fleet(['cluster-01']);
  return Object.assign(f, { slug: f.slug('cluster-01') });
}

/** A person sets the state of pull request `n` (closes it unmerged, or reopens it). */
const personSets = (slug: string, n: number, state: 'open' | 'closed') => hub.patchPull(slug, n, { state });

describe('people can say no on GitHub', () => {
  it('a pull request a person closed unmerged is declined until a new release, whose pull request names it', async () => {
    const f = await fleet();
    // no revision: the variant follows the upstream's latest release
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01', '', '""') });
    expect((await kdelta(f, 'run', '--forge', 'github')).code).toBe(0);
    const [first] = hub.gh.pulls(f.slug);
    expect(first?.state).toBe('open');
    await personSets(f.slug, first!.number, 'closed');

    const declined = await kdelta(f, 'run', '--forge', 'github');
    expect(declined.code).toBe(0);
    expect(declined.stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    expect(hub.gh.pulls(f.slug)).toHaveLength(1);
    // and again: the decline holds, and costs no write
    hub.gh.clearRequests();
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    expect(hub.gh.writes()).toBe(0);
    expect(hub.gh.pulls(f.slug).map((p) => p.state)).toEqual(['closed']);

    const listed = await kdelta(f, 'proposals', '--forge', 'github');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/declined\s+cluster-01\s+kdelta\/web/);
    expect(listed.stdout).toContain(
      'To undo a decline, reopen the pull request, or (when it cannot be reopened) add the label kdelta:propose-again',
    );
    expect(listed.stdout).toContain(`/${f.slug}/pull/${first!.number}`);

    // a new upstream release proposes again, in a new pull request that names the declined one
    f.publish(
      {
        'base-ns/namespace.yaml':
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example # the namespace\n  labels:\n    tier: gold\n',
      },
      'base-ns/v2',
    );
    const again = await kdelta(f, 'run', '--forge', 'github');
    expect(again.stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    const pulls = hub.gh.pulls(f.slug);
    expect(pulls.map((p) => p.state)).toEqual(['closed', 'open']);
    expect(pulls[1]?.body).toMatch(/A previous proposal, "kdelta: add web[^"]*" \(upstream `[^`]+`, commit `[0-9a-f]{12}`\), was declined/);
  });

  it("kdelta's own closes are not declines; a reopened pull request or the label undoes a decline", async () => {
    const f = await fleet();
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    await kdelta(f, 'run', '--forge', 'github');
    // the variant is gone: kdelta closes its unmerged pull request; back again, it is proposed again
    f.writeControl({ 'web.yaml': null });
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+closed/);
    expect(hub.gh.pulls(f.slug)[0]?.body).toContain('"closedBy":"closed"');
    f.writeControl({ 'web.yaml': packageVariant('web', 'cluster-01') });
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    expect(hub.gh.pulls(f.slug).map((p) => p.state)).toEqual(['closed', 'open']);

    // declined, then reopened: kdelta keeps it
    await personSets(f.slug, 2, 'closed');
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    await personSets(f.slug, 2, 'open');
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+unchanged/);

    // declined, then labelled to propose again: a new pull request
    await personSets(f.slug, 2, 'closed');
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+declined/);
    hub.gh.addLabel(f.slug, 2, 'kdelta:propose-again');
    expect((await kdelta(f, 'run', '--forge', 'github')).stdout).toMatch(/web\s+cluster-01\/web\s+proposed/);
    expect(hub.gh.pulls(f.slug).map((p) => p.state)).toEqual(['closed', 'closed', 'open']);
  });
});
