import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { fetchPackage } from '@kdelta/git-source';
import { listFiles } from '../util/fs.js';
import type { Materialize, MaterializeInput, PackageFiles } from './job.js';

/**
 * The first-time half of the injected step (kpt's `pkg get`): the upstream package at the
 * resolved commit, its Kptfile recording where it came from. Updating an existing package is
 * the 3-way update's job (package-update), plugged in through the same `Materialize` type.
 */

/** The upstream package's files at exactly `input.upstream.commit`. */
export async function fetchUpstreamFiles(input: MaterializeInput): Promise<Map<string, string>> {
  const scratch = await mkdtemp(join(tmpdir(), 'kdelta-get-'));
  try {
    const dest = join(scratch, 'pkg');
    await fetchPackage({
      repo: input.upstream.repo,
      ref: input.upstream.commit,
      directory: input.upstream.directory,
      dest,
      env: input.env,
      ...(input.cacheDir ? { cacheDir: input.cacheDir } : {}),
    });
    const files = new Map<string, string>();
    for (const p of await listFiles(dest, () => true)) files.set(p, await readFile(join(dest, p), 'utf8'));
    return files;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The Kptfile of a fetched package, named for the downstream and locked to the upstream commit. */
export function stampKptfile(text: string, input: MaterializeInput): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`upstream Kptfile: ${doc.errors[0]!.message.split('\n')[0]}`);
  const git = { repo: input.upstream.repo, directory: `/${input.upstream.directory}`, ref: input.upstream.ref };
  doc.setIn(['metadata', 'name'], input.downstream.package);
  doc.setIn(['upstream'], doc.createNode({ type: 'git', git, updateStrategy: 'resource-merge' }));
  doc.setIn(['upstreamLock'], doc.createNode({ type: 'git', git: { ...git, commit: input.upstream.commit } }));
  return doc.toString();
}

export async function getPackageFiles(input: MaterializeInput): Promise<PackageFiles> {
  const files = await fetchUpstreamFiles(input);
  const kptfile = files.get('Kptfile');
  if (kptfile === undefined) throw new Error(`${input.upstream.repo} ${input.upstream.directory || '/'} at ${input.upstream.ref} is not a kpt package (no Kptfile)`);
  files.set('Kptfile', stampKptfile(kptfile, input));
  return files;
}

/** Gets packages the first time; refuses to update one (nothing a user edited is replaced). */
export const getOnlyMaterialize: Materialize = async (input) => {
  if (input.downstream.local) {
    throw new Error(
      `package ${input.downstream.package} already exists and its upstream moved to ${input.upstream.ref}: updating it needs the 3-way update, which this build does not include`,
    );
  }
  const files = await getPackageFiles(input);
  return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
};
