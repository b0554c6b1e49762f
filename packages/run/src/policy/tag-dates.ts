import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readObjects, repositoryIdentity } from '@kdelta/git-source';
import type { Mirror } from '../propose/workspace.js';
import { hashOf } from '../plan/plan.js';

/**
 * When an upstream's releases were made, for a policy's minimum release age: the committer date
 * of the commit each release tag names (what git reports as a lightweight tag's date; the run's
 * mirrors hold branches, not tags). Read from the run's mirror of the upstream, one process for
 * all of them, only when a release waits on its age, and kept by commit: a release that waits
 * over several runs clones nothing after the first. A tag's commit that no branch holds has no
 * date here, and a release without a date is not old enough.
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
  const keyOf = (t: { commit: string }) => t.commit.toLowerCase();
  const missing = [...new Set(input.tags.filter((t) => typeof stored[keyOf(t)] !== 'number').map(keyOf))];
  if (missing.length > 0) {
    const mirror = await input.mirror();
    const reads = await readObjects({ dir: mirror.dir, objects: missing, type: 'commit', maxBytes: 1024 * 1024, env: input.env });
    for (const [i, commit] of missing.entries()) {
      const r = reads[i];
      // a commit object: `committer <name> <email> <seconds> <zone>`
      const text = r?.kind === 'found' ? r.content.toString('utf8') : undefined;
      const at = text === undefined ? undefined : /^committer .* (\d+) [+-]\d{4}$/m.exec(text)?.[1];
      if (at !== undefined) stored[commit] = Number(at);
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
