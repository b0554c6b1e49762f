import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git, initRepo, tempDir } from './__fixtures__/repo.js';
import { cloneShared, commitStaged, stageAll } from './local.js';
import { cloneBare } from './write.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A git template directory whose hooks each append their name to `marker` when they run. */
function templateWithHooks(marker: string): string {
  const template = join(root, 'template');
  mkdirSync(join(template, 'hooks'), { recursive: true });
  for (const hook of ['post-checkout', 'post-commit', 'reference-transaction']) {
    const path = join(template, 'hooks', hook);
    writeFileSync(path, `#!/bin/sh\necho ${hook} >> '${marker}'\n`);
    chmodSync(path, 0o755);
  }
  return template;
}

describe("a run's mirror and scratch clone", () => {
  it("copy nothing from the user's git template directory, so none of its hooks runs in them", async () => {
    const marker = join(root, 'hooks-ran.txt');
    const template = templateWithHooks(marker);
    const seed = initRepo(join(root, 'seed'));
    seed.write({ 'README.md': '# cluster\n' });
    seed.commit('init');
    const downstream = join(root, 'downstream.git');
    git(root, 'clone', '--quiet', '--bare', seed.dir, downstream);

    // a template directory set for every git the user runs (GIT_TEMPLATE_DIR, init.templateDir)
    const before = process.env.GIT_TEMPLATE_DIR;
    process.env.GIT_TEMPLATE_DIR = template;
    try {
      const mirror = join(root, 'mirror.git');
      await cloneBare({ repo: downstream, dest: mirror });
      const work = join(root, 'work');
      await cloneShared({ source: mirror, dest: work, branch: 'main' });
      writeFileSync(join(work, 'new.yaml'), 'a: 1\n');
      await stageAll({ dir: work, directory: '' });
      await commitStaged({ dir: work, message: 'add', author: { name: 'kdelta', email: 'kdelta@example.com' } });

      expect(existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n') : []).toEqual([]);
      for (const dir of [mirror, join(work, '.git')]) expect(existsSync(join(dir, 'hooks', 'post-checkout')), dir).toBe(false);
    } finally {
      if (before === undefined) delete process.env.GIT_TEMPLATE_DIR;
      else process.env.GIT_TEMPLATE_DIR = before;
    }
  });
});
