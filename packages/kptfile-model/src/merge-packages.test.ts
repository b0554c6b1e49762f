import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { mergePackages, readMergeSide } from './merge-packages.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function side(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdelta-merge-pkgs-'));
  dirs.push(dir);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return dir;
}

const kptfile = (mutators: string) => `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n${mutators}`;
const deploy = (replicas: number, image: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n      - name: web\n        image: ${image}\n`;
const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`;

describe('mergePackages', () => {
  it('merges the resources of three package directories and their Kptfiles by the Kptfile rules', () => {
    const fn = (image: string) => `  - image: ${image}\n`;
    const origin = side({ Kptfile: kptfile(fn('set-labels:v1')), 'deploy.yaml': deploy(1, 'web:1'), 'old.yaml': cm('old') });
    const upstream = side({
      Kptfile: kptfile(fn('set-labels:v1') + fn('set-namespace:v1')),
      'deploy.yaml': deploy(1, 'web:2'),
      'conf/new.yaml': cm('new'),
      'node_modules/x.yaml': cm('never-read'),
      'README.md': 'not merged',
    });
    const local = side({ Kptfile: kptfile(fn('set-labels:v1')), 'deploy.yaml': deploy(3, 'web:1'), 'old.yaml': cm('old') });
    const sides = { origin: readMergeSide(origin), upstream: readMergeSide(upstream), local: readMergeSide(local) };
    expect(sides.upstream.files.map((f) => f.path)).toEqual(['Kptfile', 'conf/new.yaml', 'deploy.yaml']);

    const r = mergePackages(sides);
    expect(r.conflicts).toEqual([]);
    const out = Object.fromEntries(r.files.map((f) => [f.path, parse(f.text)]));
    expect(out['deploy.yaml'].spec.replicas).toBe(3);
    expect(out['deploy.yaml'].spec.template.spec.containers[0].image).toBe('web:2');
    expect(out['conf/new.yaml'].metadata.name).toBe('new');
    expect(out['Kptfile'].pipeline.mutators.map((m: { image: string }) => m.image)).toEqual(['set-labels:v1', 'set-namespace:v1']);
    expect(r.deleted).toEqual(['old.yaml']);
    expect(r.report).toMatchObject({ kptfiles: ['Kptfile'], deletedFiles: ['old.yaml'] });
  });

  it('matches files given alone by local name, and merges single values when asked', () => {
    const d = side({ 'o.yaml': 'a: 1\nb: 1\n', 'u.yaml': 'a: 2\nb: 1\n', 'l.yaml': 'a: 1\nb: 3\n' });
    const sides = {
      origin: readMergeSide(join(d, 'o.yaml')),
      upstream: readMergeSide(join(d, 'u.yaml')),
      local: readMergeSide(join(d, 'l.yaml')),
    };
    const r = mergePackages(sides, { single: true });
    expect(r.files).toEqual([{ path: 'l.yaml', text: 'a: 2\nb: 3\n' }]);
    expect(r.report).toEqual({ changed: true });
  });

  it('a side that is not there throws the file system error', () => {
    expect(() => readMergeSide(join(tmpdir(), 'kdelta-no-such-side'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});
