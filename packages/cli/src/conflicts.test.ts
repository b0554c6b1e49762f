import { type Conflict, mergeFiles } from '@kdelta/merge-core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { conflictLine, conflictReport } from './conflicts.js';

const cm = (a: string, b: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: "${a}"\n  b: "${b}"\n`;

describe('conflict lines, printed from merge-core conflicts', () => {
  it('names the resource, the file, the field, the three values and who won', () => {
    const { conflicts } = mergeFiles({
      origin: [{ path: 'cm.yaml', text: cm('1', '1') }],
      upstream: [{ path: 'cm.yaml', text: cm('2', '1') }],
      local: [{ path: 'cm.yaml', text: cm('3', '1') }],
    });
    expect(conflicts).toHaveLength(1);
    expect(conflictLine(conflicts[0]!, { dir: 'web', verdict: true })).toBe(
      'ConfigMap app [web/cm.yaml]: local changed .data.a 1→3, upstream 1→2; upstream wins',
    );
    expect(conflictLine(conflicts[0]!, { verdict: false })).toBe('ConfigMap app [cm.yaml]: local changed .data.a 1→3, upstream 1→2');
    expect(conflictReport(conflicts, (c) => conflictLine(c, { verdict: true }))).toBe(
      '1 conflict between local and upstream changes:\n  ConfigMap app [cm.yaml]: local changed .data.a 1→3, upstream 1→2; upstream wins\n',
    );
  });

  it("says a resource upstream deleted is kept for local's change", () => {
    const { conflicts } = mergeFiles({
      origin: [{ path: 'cm.yaml', text: cm('1', '1') }],
      upstream: [],
      local: [{ path: 'cm.yaml', text: cm('1', '5') }],
    });
    expect(conflicts.map((c) => conflictLine(c, { verdict: true }))).toEqual([
      "ConfigMap app [cm.yaml]: upstream deleted it and local changed it; local's copy is kept",
    ]);
  });

  it('says an item local deleted that upstream changed stays deleted, naming the item', () => {
    const deployment = (mailer: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: web:1\n${mailer}`;
    const { conflicts } = mergeFiles({
      origin: [{ path: 'web.yaml', text: deployment('      - name: mailer\n        image: mailer:1\n') }],
      upstream: [{ path: 'web.yaml', text: deployment('      - name: mailer\n        image: mailer:2\n') }],
      local: [{ path: 'web.yaml', text: deployment('') }],
    });
    expect(conflicts.map((c) => conflictLine(c, { verdict: true }))).toEqual([
      'apps/Deployment web [web.yaml]: upstream changed .spec.template.spec.containers[name="mailer"] and local deleted it; it stays deleted',
    ]);
  });

  it("takes merge-core's Conflict: no second, loosely typed shape of a conflict", () => {
    // checked by `pnpm typecheck`
    expectTypeOf(conflictLine).parameter(0).toEqualTypeOf<Conflict>();
    expectTypeOf(conflictReport<Conflict & { package: string }>)
      .parameter(0)
      .toEqualTypeOf<readonly (Conflict & { package: string })[]>();
  });
});
