import type { Conflict } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import { decideBoxes, selectDecideBox, tickLine } from './decide-boxes.js';
import { renderProposalBodies, tickedChoices } from './proposal-body.js';
import { dashboardEntries, parseDashboard, renderDashboard } from '../dashboard/dashboard.js';
import { dashboardBoxes, selectDashboardBox } from '../dashboard/dashboard-boxes.js';
import type { VariantResult } from '../report/result.js';

const conflict = (resource: string, path: string, winner: 'upstream' | 'local'): Conflict =>
  ({
    resource,
    file: 'deploy.yaml',
    path,
    values: { origin: 1, upstream: 2, local: 3 },
    rule: 'resource-merge',
    winner,
    message: '',
  }) as unknown as Conflict;

const body = renderProposalBodies({
  title: 't',
  summary: 's',
  downstream: { repo: 'r', branch: 'main', directory: 'web' },
  changes: [],
  resources: [],
  conflicts: [
    conflict('apps/v1/Deployment default/web', '.spec.replicas', 'upstream'),
    conflict('apps/v1/Deployment default/api', '.spec.replicas', 'upstream'),
    conflict('apps/v1/Deployment default/web', '.spec.paused', 'local'),
  ],
  metadata: { version: '1', variant: 'web', fingerprint: 'f', headCommit: 'h', baseCommit: 'b', conflicts: 3, kind: 'variant' },
}).body;

describe("a proposal's Decide boxes, by what a person names", () => {
  const boxes = decideBoxes(body);

  it('lists every box with what ticking it takes and the names it shows', () => {
    expect(boxes.map((b) => [b.take, b.ticked, b.names.includes('.spec.replicas') || b.names.includes('.spec.paused')])).toEqual([
      ['local', false, true],
      ['local', false, true],
      ['upstream', false, true],
    ]);
  });

  it.each([
    { take: 'upstream', what: '.spec.paused', ok: true },
    { take: 'upstream', what: 'spec.paused', ok: true },
    { take: 'local', what: '.spec.paused', ok: false, error: /no open box takes local for "\.spec\.paused"/ },
    { take: 'local', what: '.spec.replicas', ok: false, error: /2 boxes take local for "\.spec\.replicas": give one's id/ },
    { take: 'local', what: '.spec.nothing', ok: false, error: /no open box takes local/ },
  ] as const)('--take $take $what', ({ take, what, ok, ...rest }) => {
    if (ok) expect(selectDecideBox(boxes, take, what).take).toBe(take);
    else expect(() => selectDecideBox(boxes, take, what)).toThrow('error' in rest ? rest.error : /./);
  });

  it('a box ticked by its id is the tick the next run reads, and only it', () => {
    const box = selectDecideBox(boxes, 'local', boxes[1]!.id.slice(0, 6));
    const ticked = tickLine(body, box.line);
    expect(tickedChoices(ticked).map((t) => t.id)).toEqual([boxes[1]!.id]);
    expect(ticked.split('\n').filter((l, i) => l !== body.split('\n')[i])).toHaveLength(1);
    expect(decideBoxes(ticked)[1]!.ticked).toBe(true);
  });
});

describe("the dashboard's boxes, by what a person names", () => {
  const result = (variant: string, downstream: string, over: Partial<VariantResult>): VariantResult => ({
    variant,
    downstream,
    action: 'failed',
    writes: false,
    dryRun: false,
    conflicts: [],
    conflictCount: 0,
    ...over,
  });
  const text = renderDashboard({
    title: 'd',
    marker: '<!-- m -->',
    entries: dashboardEntries([
      result('web', 'c1/web', { error: 'boom' }),
      result('web', 'c2/web', { error: 'boom' }),
      result('api', 'c1/api', { error: 'bang' }),
      result('db', 'c1/db', {
        action: 'declined',
        proposal: { id: '1', url: '.kdelta/proposals/c1/db.md', state: 'declined', head: 'kdelta/db', base: 'main' },
      }),
      result('old', 'c1/old', { code: 'removals-held', error: 'held' }),
    ]),
  });
  const boxes = dashboardBoxes(text);

  it.each([
    { kind: 'retry', what: 'api', ticks: { retry: ['api c1/api'] } },
    { kind: 'retry', what: 'web c2/web', ticks: { retry: ['web c2/web'] } },
    { kind: 'repropose', what: 'db', ticks: { repropose: ['.kdelta/proposals/c1/db.md'] } },
    { kind: 'allow-removals', what: undefined, ticks: { allowRemovals: [expect.stringMatching(/^[0-9a-f]{16}$/)] } },
  ] as const)('$kind $what is ticked as the next run reads it', ({ kind, what, ticks }) => {
    const box = selectDashboardBox(boxes, kind, what);
    const read = parseDashboard(tickLine(text, box.line)).ticks;
    expect({ retry: [...read.retry], repropose: [...read.repropose], allowRemovals: [...read.allowRemovals] }).toEqual({
      retry: [],
      repropose: [],
      allowRemovals: [],
      ...ticks,
    });
  });

  it('names the choices when the name is ambiguous or unknown', () => {
    expect(() => selectDashboardBox(boxes, 'retry', 'web')).toThrow(/2 open retry boxes name "web"/);
    expect(() => selectDashboardBox(boxes, 'retry', 'nope')).toThrow(
      /no open retry box of the dashboard is "nope"; its open retry boxes:\n {2}retry `web`/,
    );
  });
});
