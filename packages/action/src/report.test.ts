import type { RunReport, VariantResult } from '@kdelta/run';
import { describe, expect, it } from 'vitest';
import {
  PULL_REQUESTS_OUTPUT_BYTES,
  actionOutputs,
  controlAnnotations,
  countResults,
  fieldPath,
  issueLine,
  permissionHint,
  pullRequests,
  renderSummary,
} from './report.js';

function result(variant: string, action: VariantResult['action'], extra: Partial<VariantResult> = {}): VariantResult {
  return { variant, downstream: `cluster-01/${variant}`, action, writes: false, dryRun: false, conflicts: [], conflictCount: 0, ...extra };
}

function pr(id: string): VariantResult['proposal'] {
  return { id, url: `https://github.com/org/cluster-01/pull/${id}`, state: 'open', head: 'kdelta/x', base: 'main' };
}

function report(results: VariantResult[], extra: Partial<RunReport> = {}): RunReport {
  return { version: '1.0.0', dryRun: false, mode: 'variants', results, warnings: [], failed: 0, ...extra };
}

const CONFLICT = {
  resource: 'apps/Deployment web',
  file: 'deployment.yaml',
  path: '.spec.replicas',
  values: { origin: 1, upstream: 2, local: 3 },
  rule: 'both-changed',
  winner: 'upstream',
  message: 'both changed',
} as unknown as VariantResult['conflicts'][number];

describe('outputs', () => {
  it('counts map the actions: created, updated, closed, declined, unchanged (nothing written), deferred, failed', () => {
    const actions = [
      'proposed',
      'removal-proposed',
      'orphan-proposed',
      'updated',
      'closed',
      'unchanged',
      'up-to-date',
      'blocked',
      'not-adopted',
      'declined',
      'failed',
    ];
    const results = [...actions.map((a, i) => result(`v${i}`, a as VariantResult['action'])), result('d', 'deferred')];
    expect(countResults(results)).toEqual({ created: 3, updated: 1, closed: 1, declined: 1, unchanged: 4, deferred: 1, failed: 1 });
  });

  it('pull-requests lists the proposals with their number and URL; nothing for variants with nothing to propose', () => {
    const out = actionOutputs(
      report([
        result('a', 'proposed', { writes: true, proposal: pr('12'), conflictCount: 2 }),
        result('b', 'up-to-date'),
        result('c', 'failed', { error: 'boom' }),
        result('d', 'proposed', { writes: true, dryRun: true }),
      ]),
    );
    expect(JSON.parse(out['pull-requests']!)).toEqual([
      {
        variant: 'a',
        downstream: 'cluster-01/a',
        action: 'proposed',
        url: 'https://github.com/org/cluster-01/pull/12',
        number: 12,
        state: 'open',
        conflicts: 2,
        renderFailed: false,
      },
      {
        variant: 'd',
        downstream: 'cluster-01/d',
        action: 'proposed',
        url: null,
        number: null,
        state: null,
        conflicts: 0,
        renderFailed: false,
      },
    ]);
    expect(out).toMatchObject({
      created: '2',
      failed: '1',
      unchanged: '1',
      updated: '0',
      closed: '0',
      deferred: '0',
      'render-failed': '0',
    });
    expect(
      pullRequests([
        result('l', 'unchanged', { proposal: { ...pr('x')!, id: 'cluster-01/l', url: '.kdelta/proposals/cluster-01/l.md' } }),
      ])[0]?.number,
    ).toBeNull();
  });
});

const RENDER_FAILURE = {
  function: 'gcr.io/kpt-fn/kubeval:v0.3',
  field: 'pipeline.validators[0]',
  kptfile: 'web/Kptfile',
  message: 'web/Kptfile: pipeline.validators[0]: function "gcr.io/kpt-fn/kubeval:v0.3" failed: exit code 1',
  results: ['[error] v1/Service/web: invalid'],
};

describe('a render that failed', () => {
  it('is a proposal like any other in the counts, with its own output, a bold row and a note', () => {
    const results = [
      result('web', 'proposed', { writes: true, proposal: pr('9'), renderFailure: RENDER_FAILURE }),
      result('api', 'proposed', { writes: true, proposal: pr('10') }),
    ];
    const out = actionOutputs(report(results));
    expect(out).toMatchObject({ created: '2', failed: '0', 'render-failed': '1' });
    expect(JSON.parse(out['pull-requests']!).map((p: { variant: string; renderFailed: boolean }) => [p.variant, p.renderFailed])).toEqual([
      ['web', true],
      ['api', false],
    ]);
    const md = renderSummary(report(results));
    expect(md).toContain('2 result(s): 2 created, 1 proposed unrendered (render failed).');
    expect(md).toContain('| web | cluster-01/web | **proposed, render failed** | [#9](https://github.com/org/cluster-01/pull/9) |  |');
    expect(md).toContain('| api | cluster-01/api | proposed | [#10]');
    expect(md).toContain(
      '- **web** → cluster-01/web: render failed: function gcr.io/kpt-fn/kubeval:v0.3 (web/Kptfile pipeline.validators\\[0\\]): web/Kptfile: pipeline.validators\\[0\\]: function "gcr.io/kpt-fn/kubeval:v0.3" failed: exit code 1; proposed unrendered',
    );
    expect(md).not.toContain('**api** →');
  });
});

describe('renderSummary', () => {
  it('one row per result with a link; conflicts in a collapsed details block; notes and warnings', () => {
    const md = renderSummary(
      report(
        [
          result('web', 'updated', { writes: true, proposal: pr('7'), conflicts: [CONFLICT], conflictCount: 1 }),
          result('api', 'blocked', { message: 'branch kdelta/api has 1 commit(s) kdelta did not make' }),
          result('db|x', 'failed', { error: 'render: <script> failed' }),
        ],
        { warnings: ['update mode skipped: no remote'] },
      ),
      { title: '.kdelta' },
    );
    expect(md).toContain('## kdelta: .kdelta\n');
    expect(md).toContain('3 result(s): 1 updated, 1 unchanged, 1 failed.');
    expect(md).toContain('| web | cluster-01/web | updated | [#7](https://github.com/org/cluster-01/pull/7) | 1 |');
    expect(md).toContain('| api | cluster-01/api | **blocked** |  |  |');
    // a pipe or markup in a value cannot break the table or inject HTML
    expect(md).toContain('| db\\|x | cluster-01/db\\|x | **failed** |');
    // strangers' text through the one escaping: no element of its own
    expect(md).toContain('render: \\<script\\> failed');
    expect(md).toContain('<details>\n<summary>web → cluster-01/web: 1 conflict(s)</summary>');
    expect(md).toContain('| apps/Deployment web | deployment.yaml | .spec.replicas | 1 | 2 | 3 | upstream |');
    expect(md).toContain('### Warnings\n\n- update mode skipped: no remote');
  });

  it('a note several variants share is written once, with the variants under it', () => {
    const refused = 'GitHub: cannot make an installation token of the GitHub App 77 for org: suspended';
    const md = renderSummary(
      report([
        ...Array.from({ length: 50 }, (_, i) => result(`v${i}`, 'failed', { error: refused })),
        result('odd', 'failed', { error: 'no tag v9' }),
      ]),
    );
    expect(md.split(refused).length - 1).toBe(1);
    expect(md).toContain(`### Notes\n\n- 50 variant(s): ${refused}\n  - **v0** → cluster-01/v0\n  - **v1** → cluster-01/v1\n`);
    expect(md).toContain('- **odd** → cluster-01/odd: no tag v9');
  });

  it('an empty run, a dry run and an exhausted budget say so', () => {
    expect(renderSummary(report([], { dryRun: true }))).toContain('## kdelta (dry run: nothing written)\n\nNo variant to run.');
    const budget = renderSummary({ ...report([result('a', 'proposed')]), budget: { limit: 10, used: 10, exhausted: true } });
    expect(budget).toContain('API budget: 10 of 10 used — exhausted: the deferred variants run next time.');
  });
});

describe('control annotations', () => {
  const text = [
    'apiVersion: config.porch.kpt.dev/v1alpha1',
    'kind: PackageVariant',
    'metadata:',
    '  name: web',
    '---',
    '# the second one',
    'apiVersion: config.porch.kpt.dev/v1alpha2',
    'kind: PackageVariantSet',
    'metadata:',
    '  name: set',
    'spec:',
    '  targets:',
    '  - repositories:',
    '    - name: a',
    '',
  ].join('\n');
  const source = (document: number) => ({ file: '.kdelta/x.yaml', document, kind: 'PackageVariantSet', name: 'set' });

  it('field paths with indexes', () => {
    expect(fieldPath('spec.targets[0].repositories[12].name')).toEqual(['spec', 'targets', 0, 'repositories', 12, 'name']);
  });

  it('the field line when it exists, its nearest parent when not, else the document start', () => {
    expect(issueLine(text, { source: source(2), field: 'spec.targets[0].repositories[0].name' })).toBe(14);
    expect(issueLine(text, { source: source(2), field: 'spec.targets[0].template' })).toBe(13);
    expect(issueLine(text, { source: source(2) })).toBe(7);
    expect(issueLine(text, { source: source(1), field: 'spec.upstream' })).toBe(1);
    expect(issueLine(text, { source: source(3) })).toBeUndefined();
  });

  it('one annotation per issue, on its file; a missing directory (document 0) has no line', () => {
    const files: Record<string, string> = { '.kdelta/x.yaml': text };
    const out = controlAnnotations(
      [
        { source: source(2), field: 'spec.targets[0].repositories[0].name', message: 'Repository "a" does not exist' },
        { source: { file: '.kdelta', document: 0 }, message: 'no such directory' },
      ],
      (f) => files[f],
    );
    expect(out).toEqual([
      {
        title: 'kdelta: invalid control configuration (PackageVariantSet "set")',
        message: 'document 2: spec.targets[0].repositories[0].name: Repository "a" does not exist',
        file: '.kdelta/x.yaml',
        startLine: 14,
      },
      { title: 'kdelta: invalid control configuration', message: 'no such directory', file: '.kdelta' },
    ]);
  });
});

describe('permissionHint', () => {
  it('explains a refusal by its code: GitHub or git refused the token without naming a permission', () => {
    const hint = permissionHint({ code: 'forbidden' });
    expect(hint).toContain('contents: write and pull-requests: write');
    expect(hint).toContain('GitHub App installation token or a fine-grained token in the `token` input');
  });
  it('says nothing about other failures, whatever their text', () => {
    expect(permissionHint({ code: 'failed' })).toBeUndefined();
    expect(permissionHint({ code: 'upstream-unresolved' })).toBeUndefined();
    expect(permissionHint({})).toBeUndefined();
    // a refusal that names the permission already says what to give the token
    expect(permissionHint({ code: 'missing-permission' })).toBeUndefined();
  });
});

describe('a large run', () => {
  it('keeps the inline pull-requests output under GitHub’s 1 MB step-output limit and says it was cut short', () => {
    const results = Array.from({ length: 6000 }, (_, i) =>
      result(`variant-with-a-long-name-${String(i).padStart(5, '0')}`, 'proposed', { writes: true, proposal: pr(String(i + 1)) }),
    );
    const out = actionOutputs(report(results), '/runner/temp/kdelta-report.json');
    expect(Buffer.byteLength(out['pull-requests']!)).toBeLessThanOrEqual(PULL_REQUESTS_OUTPUT_BYTES);
    const inline = JSON.parse(out['pull-requests']!) as { variant: string }[];
    expect(inline.length).toBeGreaterThan(1000);
    expect(inline.length).toBeLessThan(6000);
    expect(inline[0]?.variant).toBe('variant-with-a-long-name-00000');
    expect(out['pull-requests-truncated']).toBe('true');
    expect(out['report-path']).toBe('/runner/temp/kdelta-report.json');
    const all = Object.values(out).reduce((n, v) => n + Buffer.byteLength(v), 0);
    expect(all).toBeLessThan(1024 * 1024);
  });
});
