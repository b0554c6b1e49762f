import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { git, tempDir } from '@kdelta/test-support';
import { checkoutMirror, mirrorHeads } from './workspace.js';

it("makes many variants' work trees of one mirror at once, each at the base branch (git's own work-tree adds race)", async () => {
  const root = tempDir('kdelta-workspace-');
  const src = join(root, 'src');
  git(root, 'init', '--quiet', '--initial-branch', 'main', src);
  git(src, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '--quiet', '--allow-empty', '-m', 'base');
  const mirror = join(root, 'mirror.git');
  git(root, 'clone', '--quiet', '--bare', src, mirror);
  const m = { dir: mirror, heads: await mirrorHeads(mirror) };
  const made = await Promise.allSettled(
    Array.from({ length: 64 }, (_, i) => checkoutMirror(m, src, 'main', `kdelta/v${i}`, join(root, 'jobs', `${i}-v${i}`))),
  );
  expect(made.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
  for (const r of made) {
    const ws = (r as PromiseFulfilledResult<Awaited<ReturnType<typeof checkoutMirror>>>).value;
    expect(git(ws.dir, 'rev-parse', 'HEAD')).toBe(m.heads.get('main'));
    expect(readFileSync(join(ws.dir, '.git'), 'utf8')).toContain(mirror);
  }
});
