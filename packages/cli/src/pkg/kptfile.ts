import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { withoutCredentials } from '@kdelta/git-source';
import { type Kptfile, type ParsedKptfile, type UpdateStrategy, parseKptfile, printKptfile, readKptfileText } from '@kdelta/kptfile-model';
import { KPTFILE, exists } from './tree.js';

/**
 * Read a package's Kptfile, strictly (`readKptfileText`, as merge3 and variant apply read it):
 * an unknown field, a wrong type, apiVersion or kind is an error naming the file and the field.
 */
export function readKptfile(dir: string): ParsedKptfile | undefined {
  const file = join(dir, KPTFILE);
  if (!exists(file)) return undefined;
  return readKptfileText(readFileSync(file, 'utf8'), file);
}

export interface UpstreamRecord {
  readonly repo: string;
  readonly directory: string;
  readonly ref: string;
  readonly updateStrategy?: UpdateStrategy | undefined;
}

/**
 * The Kptfile with `upstream` (and, when `commit` is given, `upstreamLock`) set, printed over its
 * text. The repository is recorded without credentials, whatever the caller had: a token that
 * came in a URL (or in a Kptfile written by an older tool) is used once and never written down.
 */
export function withUpstream(
  parsed: ParsedKptfile | undefined,
  name: string | undefined,
  upstream: UpstreamRecord | undefined,
  commit: string | undefined,
): string {
  const base: ParsedKptfile =
    parsed ?? parseKptfile(`apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${stringify(name ?? 'pkg').trim()}\n`);
  const next: Kptfile = structuredClone(base.kptfile);
  if (name !== undefined) next.metadata = { ...next.metadata, name };
  if (upstream) {
    next.upstream = {
      type: 'git',
      git: { repo: upstream.repo, directory: upstream.directory, ref: upstream.ref },
      updateStrategy: upstream.updateStrategy ?? next.upstream?.updateStrategy ?? 'resource-merge',
    };
    if (commit !== undefined) {
      next.upstreamLock = { type: 'git', git: { repo: upstream.repo, directory: upstream.directory, ref: upstream.ref, commit } };
    }
  }
  if (next.upstream?.git?.repo) next.upstream.git.repo = withoutCredentials(next.upstream.git.repo);
  if (next.upstreamLock?.git?.repo) next.upstreamLock.git.repo = withoutCredentials(next.upstreamLock.git.repo);
  return printKptfile(base, orderKeys(next));
}

/** kpt's key order for a Kptfile. */
function orderKeys(k: Kptfile): Kptfile {
  const order = ['apiVersion', 'kind', 'metadata', 'upstream', 'upstreamLock', 'info', 'pipeline', 'inventory', 'status'];
  const out: Record<string, unknown> = {};
  for (const key of order) if ((k as Record<string, unknown>)[key] !== undefined) out[key] = (k as Record<string, unknown>)[key];
  for (const [key, v] of Object.entries(k)) if (!(key in out)) out[key] = v;
  return out as Kptfile;
}
