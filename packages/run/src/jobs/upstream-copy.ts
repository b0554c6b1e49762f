import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchPackage } from '@kdelta/git-source';
import { makeTempDir, removeTempDir } from '@kdelta/kptfile-model';
import { parseYamlDocument } from '@kdelta/merge-core';
import { RunError } from '../errors.js';
import type { FileContent, PackageFiles } from './file-content.js';
import type { MaterializeInput } from './materialize.js';
import { readPackageDir } from './package-files.js';

// A plain copy of the upstream package (no merge): tests use it to check what is around the step.

/** The upstream package's files at exactly `input.upstream.commit`. */
export async function fetchUpstreamFiles(input: MaterializeInput): Promise<Map<string, FileContent>> {
  const scratch = makeTempDir(tmpdir(), 'get');
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
    return (await readPackageDir(dest)) ?? new Map<string, FileContent>();
  } finally {
    removeTempDir(scratch);
  }
}

/** The Kptfile of a fetched package, named for the downstream and locked to the upstream commit. */
export function stampKptfile(text: string, input: MaterializeInput): string {
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0) throw new RunError('invalid-kptfile', `upstream Kptfile: ${doc.errors[0]!.message.split('\n')[0]}`);
  const git = { repo: input.upstream.repo, directory: `/${input.upstream.directory}`, ref: input.upstream.ref };
  doc.setIn(['metadata', 'name'], input.downstream.package);
  doc.setIn(['upstream'], doc.createNode({ type: 'git', git, updateStrategy: 'resource-merge' }));
  doc.setIn(['upstreamLock'], doc.createNode({ type: 'git', git: { ...git, commit: input.upstream.commit } }));
  return doc.toString();
}

/** The upstream package, its Kptfile stamped: upstream wins everywhere (no merge). */
export async function getPackageFiles(input: MaterializeInput): Promise<PackageFiles> {
  const files = await fetchUpstreamFiles(input);
  const kptfile = files.get('Kptfile');
  if (typeof kptfile !== 'string')
    throw new RunError(
      'not-a-package',
      `${input.upstream.repo} ${input.upstream.directory || '/'} at ${input.upstream.ref} is not a kpt package (no Kptfile)`,
    );
  files.set('Kptfile', stampKptfile(kptfile, input));
  return files;
}
