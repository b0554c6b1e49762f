import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initRepo, tempDir } from './__fixtures__/repo.js';
import { readObjects } from './objects.js';

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('readObjects: many objects, one git process', () => {
  const repo = initRepo(join(root, 'repo'));
  repo.write({ 'a/Kptfile': 'kind: Kptfile\n', 'b/Kptfile': `${'x'.repeat(100)}\n`, 'bin.dat': '\u0000\u00ff\n' });
  const commit = repo.commit('files');

  it('answers in the order asked: found (bytes as stored), too large (its size), missing, and of another type', async () => {
    const reads = await readObjects({
      dir: repo.dir,
      objects: [`${commit}:a/Kptfile`, `${commit}:b/Kptfile`, `${commit}:nope`, `${commit}:a`, `${commit}:bin.dat`, commit],
      maxBytes: 50,
    });
    expect(reads.map((r) => r.kind)).toEqual(['found', 'too-large', 'missing', 'missing', 'found', 'missing']);
    expect(reads[0]).toEqual({ kind: 'found', content: Buffer.from('kind: Kptfile\n') });
    expect(reads[1]).toEqual({ kind: 'too-large', size: 101 });
    expect(reads[4]).toEqual({ kind: 'found', content: Buffer.from('\u0000\u00ff\n', 'utf8') });
  });

  it('reads commits when asked for them', async () => {
    const [read] = await readObjects({ dir: repo.dir, objects: [commit], type: 'commit' });
    expect(read?.kind === 'found' && read.content.toString('utf8')).toMatch(/^tree [0-9a-f]{40}\n/);
  });

  it('refuses a name with a line break (it would read as two)', async () => {
    await expect(readObjects({ dir: repo.dir, objects: [`${commit}:a\nHEAD`] })).rejects.toThrow(/line break/);
  });
});
