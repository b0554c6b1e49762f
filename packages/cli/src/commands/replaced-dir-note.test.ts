import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../main.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function renderablePackage(): string {
  const root = mkdtempSync(join(tmpdir(), 'kdelta-note-'));
  roots.push(root);
  const pkg = join(root, 'app');
  mkdirSync(pkg);
  writeFileSync(
    join(pkg, 'Kptfile'),
    'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.2\n    configMap: {tier: web}\n',
  );
  writeFileSync(join(pkg, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n');
  return pkg;
}

async function render(cwd: string, terminal: boolean, ...args: string[]) {
  let stderr = '';
  const code = await main(['fn', 'render', ...args], {
    stdout: () => undefined,
    stderr: (t) => void (stderr += t),
    cwd,
    env: {},
    ...(terminal ? { stderrTerminal: { columns: 100 } } : {}),
  });
  return { code, stderr };
}

describe('a package written from inside it', () => {
  it('tells a person at a terminal that the shell must enter the new directory', async () => {
    const pkg = renderablePackage();
    const r = await render(pkg, true);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(pkg, 'cm.yaml'), 'utf8')).toContain('tier: web');
    expect(r.stderr).toContain('a shell in it sees the new files after `cd .`');
  });

  it('says nothing from outside the package, or when stderr is not a terminal (scripts, kpt-compatible output)', async () => {
    const outside = renderablePackage();
    expect((await render(join(outside, '..'), true, 'app')).stderr).not.toContain('cd .');
    const inside = renderablePackage();
    expect((await render(inside, false)).stderr).not.toContain('cd .');
  });
});
