import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryIdentity, runGit } from '@kdelta/git-source';
import type { Mirror } from '../propose/workspace.js';
import { hashOf } from '../plan/plan.js';

/**
 * When an upstream's release tags were made, for a policy's minimum release age: an annotated
 * tag's date, else its commit's committer date (`%(creatordate)`). Read from the run's mirror of
 * the upstream only when a release waits on its age, and kept by tag and commit (a tag moved to
 * another commit is read again): a release that waits over several runs clones nothing after the
 * first.
 */

export interface TagDatesInput {
  readonly url: string;
  /** The tags and the commits `ls-remote` gave them. */
  readonly tags: readonly { readonly tag: string; readonly commit: string }[];
  readonly cacheRoot: string;
  readonly mirror: () => Promise<Mirror>;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

type Stored = Record<string, number>;

function fileOf(cacheRoot: string, url: string): string {
  return join(cacheRoot, 'run-tag-dates', `${hashOf({ url: repositoryIdentity(url) }).slice(0, 32)}.json`);
}

export async function tagDates(input: TagDatesInput): Promise<Map<string, Date>> {
  const out = new Map<string, Date>();
  if (input.tags.length === 0) return out;
  const file = fileOf(input.cacheRoot, input.url);
  let stored: Stored = {};
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) stored = parsed as Stored;
  } catch {
    // none kept yet
  }
  const keyOf = (t: { tag: string; commit: string }) => `${t.tag} ${t.commit}`;
  const missing = input.tags.filter((t) => typeof stored[keyOf(t)] !== 'number');
  if (missing.length > 0) {
    const mirror = await input.mirror();
    const { stdout } = await runGit(
      ['for-each-ref', '--format=%(refname) %(*objectname) %(objectname) %(creatordate:unix)', ...missing.map((t) => `refs/tags/${t.tag}`)],
      { cwd: mirror.dir, env: input.env },
    );
    for (const line of stdout.split('\n')) {
      // an annotated tag: `refs/tags/v1 <commit> <tag object> <date>`; a lightweight one: `refs/tags/v1  <commit> <date>`
      const m = /^refs\/tags\/(\S+) (\S*) (\S+) (\d+)$/.exec(line.trim());
      if (!m) continue;
      const commit = (m[2] || m[3])!.toLowerCase();
      stored[`${m[1]} ${commit}`] = Number(m[4]);
    }
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      await mkdir(join(input.cacheRoot, 'run-tag-dates'), { recursive: true });
      await writeFile(tmp, JSON.stringify(stored));
      await rename(tmp, file);
    } catch {
      await rm(tmp, { force: true }).catch(() => undefined);
    }
  }
  for (const t of input.tags) {
    const at = stored[keyOf(t)];
    if (typeof at === 'number') out.set(t.tag, new Date(at * 1000));
  }
  return out;
}
