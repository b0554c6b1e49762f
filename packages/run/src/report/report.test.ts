import type { Conflict } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import { MAX_BODY, renderProposalBodies, SHORTENED_NOTE, type ProposalBodyInput } from '../propose/proposal-body.js';
import { parseMetadataBlock } from '../propose/proposal-metadata.js';

function input(files: number, conflicts: number, over: Partial<ProposalBodyInput> = {}): ProposalBodyInput {
  const conflict = (i: number): Conflict =>
    ({
      resource: `apps/v1/Deployment default/web-${i}`,
      file: `web/deploy-${i}.yaml`,
      path: 'spec.replicas',
      values: { origin: 1, upstream: 2, local: 3 },
      rule: 'local-wins',
      winner: 'local',
      message: '',
    }) as unknown as Conflict;
  return {
    title: 'kdelta: update web (web) to v2',
    summary: 'Updates package `web`.',
    downstream: { repo: 'https://github.com/org/cluster-01', branch: 'main', directory: 'web' },
    changes: Array.from({ length: files }, (_, i) => ({ status: 'modified' as const, path: `web/some/rather/long/path/file-${i}.yaml` })),
    resources: [],
    conflicts: Array.from({ length: conflicts }, (_, i) => conflict(i)),
    metadata: {
      version: '1.0.0',
      variant: 'web',
      fingerprint: 'f'.repeat(32),
      headCommit: 'a'.repeat(40),
      baseCommit: 'b'.repeat(40),
      upstream: { repo: 'https://github.com/org/catalog', ref: 'v2', commit: 'c'.repeat(40), oldCommit: 'd'.repeat(40) },
      conflicts,
      kind: 'variant',
    },
    ...over,
  };
}

describe('the proposal body', () => {
  it('is whole when it fits, with the upstream compare link in its provenance', () => {
    const { body, full, shortened } = renderProposalBodies(input(3, 1, { compareUrl: 'https://github.com/org/catalog/compare/ddd...ccc' }));
    expect(shortened).toBe(false);
    expect(body).toBe(full);
    expect(body).toContain('- upstream changes: [compare](https://github.com/org/catalog/compare/ddd...ccc)');
    expect(body).not.toContain(SHORTENED_NOTE);
  });

  it('drops detail step by step to stay under the limit, says so, and keeps the metadata block whole', () => {
    // conflicts first: a few thousand rows do not fit, the file list still does
    const many = renderProposalBodies(input(20, 3000));
    expect(many.shortened).toBe(true);
    expect(many.body.length).toBeLessThanOrEqual(MAX_BODY);
    expect(many.body).toContain(SHORTENED_NOTE);
    expect(many.body).toMatch(/…and \d+ more \(see the run's report\)/);
    expect(many.body).toContain('file-19.yaml');
    expect(many.full).toContain('web-2999');
    expect(parseMetadataBlock(many.body)?.fingerprint).toBe('f'.repeat(32));

    // then the file list
    const huge = renderProposalBodies(input(5000, 0));
    expect(huge.body.length).toBeLessThanOrEqual(MAX_BODY);
    expect(huge.body).toMatch(/- …and \d+ more file\(s\)/);
    expect(huge.full).toContain('file-4999.yaml');
    expect(parseMetadataBlock(huge.body)?.headCommit).toBe('a'.repeat(40));
  });

  it('with a tiny limit keeps only the headline, the counts and the metadata', () => {
    const { body } = renderProposalBodies(input(50, 50), 1000);
    expect(body.length).toBeLessThanOrEqual(1000);
    expect(body).not.toContain('| resource |');
    expect(body).toContain('### Conflicts (50)');
    expect(body).toContain("50 file(s); the list is in the run's report.");
    expect(parseMetadataBlock(body)?.conflicts).toBe(50);
  });

  it('a title too long for any body is cut, never the metadata block', () => {
    const { body } = renderProposalBodies(input(1, 0, { summary: 'x'.repeat(5000) }), 2000);
    expect(body.length).toBeLessThanOrEqual(2000);
    expect(parseMetadataBlock(body)?.variant).toBe('web');
  });

  it('a failed render has its own section, kept whole when everything else is shortened', () => {
    const renderFailure = {
      function: 'gcr.io/kpt-fn/kubeval:v0.3',
      field: 'pipeline.validators[0]',
      kptfile: 'web/Kptfile',
      message: 'web/Kptfile: pipeline.validators[0]: function "gcr.io/kpt-fn/kubeval:v0.3" failed: exit code 1',
      results: ['[error] v1/Service/web: `spec.ports` is required'],
    };
    const whole = renderProposalBodies(input(3, 0, { renderFailure }));
    expect(whole.body).toContain('### Render failed\n\n');
    expect(whole.body).toContain('**unrendered**');
    expect(whole.body).toContain('- function: `gcr.io/kpt-fn/kubeval:v0.3`\n- in: `web/Kptfile` `pipeline.validators[0]`\n');
    expect(whole.body).toContain(
      '- error: `web/Kptfile: pipeline.validators[0]: function "gcr.io/kpt-fn/kubeval:v0.3" failed: exit code 1`',
    );
    // a backtick in a result is quoted with double backticks
    expect(whole.body).toContain('- results:\n  - ``[error] v1/Service/web: `spec.ports` is required``');
    // before the changes: the first thing a reviewer reads after the summary
    expect(whole.body.indexOf('### Render failed')).toBeLessThan(whole.body.indexOf('### What changed'));
    expect(renderProposalBodies(input(3, 0)).body).not.toContain('Render failed');

    const tight = renderProposalBodies(input(5000, 200, { renderFailure }));
    expect(tight.shortened).toBe(true);
    expect(tight.body.length).toBeLessThanOrEqual(MAX_BODY);
    expect(tight.body).toContain('- results:\n  - ``[error] v1/Service/web: `spec.ports` is required``');
  });
});
