import { describe, expect, it } from 'vitest';
import { merge3Text } from '../value.js';
import { mergeFiles } from '../resource/merge-files.js';

const deploy = (body: string) => `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n${body}`;
const merge = (origin: string, upstream: string, local: string, strategy: 'upstream-wins' | 'local-wins' | 'fail' = 'upstream-wins') =>
  mergeFiles(
    {
      origin: [{ path: 'd.yaml', text: origin }],
      upstream: [{ path: 'd.yaml', text: upstream }],
      local: [{ path: 'd.yaml', text: local }],
    },
    { strategy },
  );

describe('# kdelta:local pins a field to local', () => {
  it('keeps a pinned scalar and its comment where upstream changed it, as a decision, not a conflict', () => {
    const r = merge(
      deploy('spec:\n  replicas: 1\n  paused: false\n'),
      deploy('spec:\n  replicas: 2\n  paused: true\n'),
      deploy('spec:\n  replicas: 5 # kdelta:local\n  paused: false\n'),
    );
    expect(r.files[0]!.text).toBe(deploy('spec:\n  replicas: 5 # kdelta:local\n  paused: true\n'));
    expect(r.conflicts).toEqual([]);
    expect(r.decisions).toMatchObject([{ resource: 'apps/Deployment web', file: 'd.yaml', path: '.spec.replicas', rule: 'pinned-local' }]);
    expect(r.decisions[0]!.values).toEqual({ origin: 1, upstream: 2, local: 5 });
  });

  it('keeps a pinned value local left as origin had it (upstream does not win it either)', () => {
    const r = merge(deploy('spec:\n  replicas: 1\n'), deploy('spec:\n  replicas: 2\n'), deploy('spec:\n  replicas: 1 # kdelta:local\n'));
    expect(r.files[0]!.text).toBe(deploy('spec:\n  replicas: 1 # kdelta:local\n'));
    expect(r.decisions).toHaveLength(1);
  });

  it('keeps a pinned map whole: upstream additions, changes and deletions under it are not taken', () => {
    const r = merge(
      deploy('  labels:\n    app: web\n    tier: a\nspec:\n  replicas: 1\n'),
      deploy('  labels:\n    app: web2\n    team: t\nspec:\n  replicas: 2\n'),
      deploy('  labels: # kdelta:local\n    app: web\n    tier: a\nspec:\n  replicas: 1\n'),
    );
    expect(r.files[0]!.text).toBe(deploy('  labels: # kdelta:local\n    app: web\n    tier: a\nspec:\n  replicas: 2\n'));
    expect(r.decisions.map((d) => d.path)).toEqual(['.metadata.labels']);
  });

  it('keeps a pinned keyed list and a pinned atomic list whole', () => {
    const pod = (containers: string, args: string) =>
      deploy(
        `spec:\n  template:\n    spec:\n      containers:${containers}\n      - name: app\n        image: nginx\n        args:${args}\n`,
      );
    const r = merge(
      pod('', ' [a]'),
      pod('\n      - name: sidecar\n        image: log', ' [b]'),
      pod(' # kdelta:local', ' [a] # kdelta:local'),
    );
    expect(r.files[0]!.text).toBe(pod(' # kdelta:local', ' [a] # kdelta:local'));
    expect(r.decisions.map((d) => d.path)).toEqual(['.spec.template.spec.containers']);
  });

  it('keeps a pinned field upstream deleted, and the map or list that holds it', () => {
    const r = merge(
      deploy('spec:\n  replicas: 1\n  strategy:\n    type: Recreate\n'),
      deploy('spec:\n  replicas: 1\n'),
      deploy('spec:\n  replicas: 1\n  strategy:\n    type: Recreate # kdelta:local\n'),
    );
    expect(r.files[0]!.text).toBe(deploy('spec:\n  replicas: 1\n  strategy:\n    type: Recreate # kdelta:local\n'));
    expect(r.decisions.map((d) => d.path)).toEqual(['.spec.strategy.type']);
  });

  it('keeps a resource upstream deleted when it holds a pinned field', () => {
    const r = merge(deploy('spec:\n  replicas: 1\n'), '', deploy('spec:\n  replicas: 1 # kdelta:local\n'));
    expect(r.files[0]!.text).toBe(deploy('spec:\n  replicas: 1 # kdelta:local\n'));
    expect(r.report[0]!.action).toBe('kept');
    expect(r.decisions).toMatchObject([{ path: '.', rule: 'pinned-local' }]);
  });

  it('is a decision under every strategy: fail reports no conflict for a pinned field', () => {
    for (const strategy of ['upstream-wins', 'local-wins', 'fail'] as const) {
      const r = merge(
        deploy('spec:\n  replicas: 1\n'),
        deploy('spec:\n  replicas: 2\n'),
        deploy('spec:\n  replicas: 3 # kdelta:local\n'),
        strategy,
      );
      expect(r.conflicts).toEqual([]);
      expect(r.files[0]!.text).toContain('replicas: 3 # kdelta:local');
    }
  });

  it('pins a field of a single value too (merge3Text)', () => {
    const r = merge3Text({ origin: 'a: 1\nb: 1\n', upstream: 'a: 2\nb: 2\n', local: 'a: 1 # kdelta:local\nb: 1\n' });
    expect(r.text).toBe('a: 1 # kdelta:local\nb: 2\n');
    expect(r.decisions.map((d) => d.path)).toEqual(['.a']);
  });

  it('is not fooled by a comment that only mentions the word', () => {
    const r = merge(
      deploy('spec:\n  replicas: 1\n'),
      deploy('spec:\n  replicas: 2\n'),
      deploy('spec:\n  replicas: 1 # not kdelta:local\n'),
    );
    expect(r.files[0]!.text).toContain('replicas: 2');
    expect(r.decisions).toEqual([]);
  });
});
