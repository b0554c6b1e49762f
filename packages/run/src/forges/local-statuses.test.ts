import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalForge } from './local.js';
import { LOCAL_STATUSES_FILE, parseLocalStatuses, setLocalStatus } from './local-statuses.js';

// The local forge's health signals: a status a person sets on a downstream commit, which a
// rollout reads as GitHub's commit status or check run.

const root = mkdtempSync(join(tmpdir(), 'kdelta-statuses-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const flux = { name: 'flux-system', kind: 'any' as const };

describe('the local forge reads the statuses a person set', () => {
  it('missing until set; the latest per repository, commit and name; another repository, commit or name is not it', async () => {
    const dir = join(root, `d${++n}`);
    const forge = createLocalForge({ dir });
    const repoA = { downstream: 'repo-a', repo: '/fleet/repo-a' };
    expect(await forge.commitSignal!(repoA, A, flux)).toEqual({ state: 'missing' });
    const at = new Date('2026-12-01T10:00:00Z');
    await setLocalStatus(dir, { repo: '/fleet/repo-a', downstream: 'repo-a', commit: A, name: 'flux-system', state: 'pending', at });
    await setLocalStatus(dir, {
      repo: '/fleet/repo-a.git', // the same repository, spelt otherwise
      downstream: 'repo-a',
      commit: A,
      name: 'flux-system',
      state: 'failure',
      description: 'kustomization apps failed',
      at,
    });
    await setLocalStatus(dir, { repo: '/fleet/repo-b', downstream: 'repo-b', commit: A, name: 'flux-system', state: 'success', at });
    expect(await forge.commitSignal!(repoA, A, flux)).toEqual({ state: 'failure', description: 'kustomization apps failed' });
    expect(await forge.commitSignal!(repoA, B, flux)).toEqual({ state: 'missing' });
    expect(await forge.commitSignal!(repoA, A, { name: 'argocd', kind: 'status' })).toEqual({ state: 'missing' });
    expect(await forge.commitSignal!({ downstream: 'repo-b', repo: 'file:///fleet/repo-b' }, A, flux)).toEqual({ state: 'success' });
    // one entry per slot: the file stays small
    expect(JSON.parse(readFileSync(join(dir, LOCAL_STATUSES_FILE), 'utf8')).statuses).toHaveLength(2);
    // the records' listing is not confused by the file beside them
    expect(await forge.list()).toEqual([]);
  });

  it('keeps no credentials of a repository URL', async () => {
    const dir = join(root, `d${++n}`);
    await setLocalStatus(dir, {
      repo: 'https://user:s3cret@git.example.com/fleet/repo-a.git',
      downstream: 'repo-a',
      commit: A,
      name: 'flux-system',
      state: 'success',
      at: new Date(),
    });
    expect(readFileSync(join(dir, LOCAL_STATUSES_FILE), 'utf8')).not.toContain('s3cret');
  });

  it.each([
    ['not JSON', '{', /statuses\.json: not JSON/],
    ['no list', '{"statuses": 3}', /statuses\.json: expected \{"statuses": \[\.\.\.\]\}/],
    [
      'a bad state',
      `{"statuses":[{"repo":"/r","downstream":"r","commit":"${A}","name":"f","state":"green","at":"x"}]}`,
      /statuses\[0\]\.state: expected success, failure or pending \(got "green"\)/,
    ],
    [
      'a short commit',
      `{"statuses":[{"repo":"/r","downstream":"r","commit":"abc","name":"f","state":"success","at":"x"}]}`,
      /statuses\[0\]\.commit: expected a full commit id/,
    ],
  ])('a file kdelta did not write so is an error naming the file and field: %s', async (_name, text, message) => {
    const dir = join(root, `d${++n}`);
    const forge = createLocalForge({ dir });
    await setLocalStatus(dir, { repo: '/r', downstream: 'r', commit: A, name: 'f', state: 'success', at: new Date() });
    writeFileSync(join(dir, LOCAL_STATUSES_FILE), text);
    await expect(forge.commitSignal!({ downstream: 'r', repo: '/r' }, A, flux)).rejects.toMatchObject({
      code: 'invalid-statuses-file',
      message,
    });
    expect(() => parseLocalStatuses(text, 'statuses.json')).toThrow(message);
  });
});
