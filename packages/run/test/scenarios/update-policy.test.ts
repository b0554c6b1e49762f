import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { packageVariant } from '@kdelta/test-support';
import { ControlError, type RunReport } from '../../src/index.js';
import { describeScenarios, type ScenarioFleet } from './harness.js';

/**
 * UpdatePolicy as the control stage reads it, on every forge: a bad policy (a field, two policies
 * on one variant, a wave label the policy does not list) stops the run before anything is written,
 * naming file and field; a policy that governs no variant changes nothing, and costs nothing.
 */

const policy = (name: string, spec: string) =>
  `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, '  ')}\n`;

/** The fleet's Repositories with `labels` on one downstream (both forges write them with test-support's `repository`). */
function label(f: ScenarioFleet, downstream: string, labels: Record<string, string>): void {
  const text = readFileSync(join(f.control, '.kdelta', 'repositories.yaml'), 'utf8');
  const at = `  name: ${downstream}\n  namespace: default\n`;
  expect(text).toContain(at);
  const lines = Object.entries(labels).map(([k, v]) => `    ${k}: ${v}\n`);
  f.writeControl({ 'repositories.yaml': text.replace(at, `${at}  labels:\n${lines.join('')}`) });
}

async function refused(f: ScenarioFleet): Promise<string> {
  f.mark();
  const error = await f.run().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ControlError);
  expect(f.wrote()).toBe(false);
  return (error as Error).message;
}

const outcome = (r: RunReport) => r.results.map((x) => `${x.variant} ${x.action}`);

describeScenarios('update policy: the control resource', {}, ({ fleet }) => {
  it('a bad policy stops the run before any write, naming file, field and reason; fixed, the run goes on', async () => {
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') }, { copy: true });
    expect(outcome(await f.run())).toEqual(['web proposed']);
    f.publish({ 'base-ns/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: v2\n' }, 'base-ns/v1');

    f.writeControl({ 'policy.yaml': policy('platform', 'updateTypes: [patch, mayor]\nrollout: {soak: soon}') });
    const message = await refused(f);
    expect(message).toContain('invalid control configuration (2 problems)');
    expect(message).toContain(
      '.kdelta/policy.yaml: document 1 (UpdatePolicy "platform"): spec.updateTypes[1]: unknown update type "mayor" (expected patch, minor or major) (line 6)',
    );
    expect(message).toContain(
      '.kdelta/policy.yaml: document 1 (UpdatePolicy "platform"): spec.rollout.soak: expected a duration like 30s, 15m, 2h, 3d, 1w or 1h30m, got "soon" (line 7)',
    );

    f.writeControl({ 'policy.yaml': policy('platform', 'updateTypes: [patch, minor, major]\nrollout: {soak: 2h}') });
    expect(outcome(await f.run())).toEqual(['web updated']);
  });

  it('two policies selecting one variant: refused, naming both documents and the variant', async () => {
    const f = await fleet(['cluster-01'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'a.yaml': policy('everything', '{}'),
      'b.yaml': policy('web', 'selector: {packageVariants: ["web*"]}'),
    });
    expect(await refused(f)).toContain(
      '.kdelta/b.yaml: document 1 (UpdatePolicy "web"): spec.selector: selects variant "web", which UpdatePolicy "everything" (.kdelta/a.yaml: document 1 (UpdatePolicy "everything")) selects too: at most one policy governs a variant (narrow one of the selectors) (line 6)',
    );
  });

  it("a downstream's wave label its policy does not list: refused, naming the Repository's label", async () => {
    const f = await fleet(['cluster-01', 'cluster-02'], {
      'web.yaml': packageVariant('web', 'cluster-01'),
      'db.yaml': packageVariant('db', 'cluster-02'),
      'policy.yaml': policy('platform', 'selector: {packageVariants: [web]}\nrollout: {waves: [canary, prod]}'),
    });
    label(f, 'cluster-01', { 'kdelta.dev/wave': 'canaries' });
    // a label on a Repository no policy governs is none of a policy's business
    label(f, 'cluster-02', { 'kdelta.dev/wave': 'whatever' });
    const message = await refused(f);
    expect(message).toMatch(
      /^invalid control configuration: \.kdelta\/repositories\.yaml: document 2 \(Repository "cluster-01"\): metadata\.labels\.kdelta\.dev\/wave: "canaries" is not a wave of UpdatePolicy "platform", which governs variants of this Repository \(its waves: canary, prod\) \(line \d+\)$/,
    );
  });

  it('a policy that governs no variant changes nothing and costs nothing', async () => {
    const f = await fleet(['cluster-01'], { 'web.yaml': packageVariant('web', 'cluster-01') }, { copy: true });
    expect(outcome(await f.run())).toEqual(['web proposed']);
    // what the run asks GitHub, in order of operation (the local forge asks no one)
    const asked = () => (f.github ? f.github.gh.requests.map((r) => `${r.method} ${r.operationId ?? r.path}`).sort() : []);
    f.mark();
    f.github?.gh.clearRequests();
    const without = await f.run();
    const cost = asked();
    if (f.github) expect(cost.length).toBeGreaterThan(0);
    f.writeControl({ 'policy.yaml': policy('elsewhere', 'selector: {packageVariants: ["db-*"]}\nupdateTypes: [patch]\nrollout: {}') });
    f.github?.gh.clearRequests();
    const withPolicy = await f.run();
    expect(outcome(withPolicy)).toEqual(outcome(without));
    expect(outcome(withPolicy)).toEqual(['web unchanged']);
    expect(asked()).toEqual(cost);
    expect(f.wrote()).toBe(false);
  });
});
