import { changedBetween, lastCommitWithLine, showFile } from '@kdelta/git-source';
import { formatIdentity, identityOf, parseStream } from '@kdelta/merge-core';
import { isMap } from 'yaml';
import type { FileChange } from './proposal-body.js';
import { inert } from '../markdown.js';

/**
 * What was edited on a downstream's package since kdelta last proposed it: what a removal would
 * lose, for the reviewer of that removal.
 */

export interface ResourceEdit {
  readonly status: 'added' | 'modified' | 'deleted';
  /** `Kind namespace/name`, as the proposals' resource tables name it. */
  readonly resource: string;
  readonly file: string;
}

export interface LocalEdits {
  /**
   * The last commit of kdelta's for this package on the branch (its trailer names the variant);
   * undefined when none is there, so nothing can be told apart from kdelta's own content.
   */
  readonly since: string | undefined;
  readonly files: readonly FileChange[];
  readonly resources: readonly ResourceEdit[];
}

const YAML_FILE = /\.ya?ml$/;

/** Each resource of a YAML file by its identity → its document's text; empty when the file is not KRM YAML. */
function resourcesOf(text: string | undefined, file: string): Map<string, { name: string; text: string }> {
  const out = new Map<string, { name: string; text: string }>();
  if (text === undefined) return out;
  try {
    for (const d of parseStream(text, file).documents) {
      const root = d.doc.contents;
      const id = isMap(root) ? identityOf(root) : undefined;
      if (id) out.set(formatIdentity(id), { name: formatIdentity(id), text: d.text.replace(/^---\n/, '').trim() });
    }
  } catch {
    // not YAML: the file's own line says it changed
  }
  return out;
}

/**
 * The files and resources under `directory` of `branch` (in the repository at `dir`) that differ
 * from the last commit with the trailer `trailer` that touched them.
 */
export async function findLocalEdits(input: { dir: string; branch: string; directory: string; trailer: string }): Promise<LocalEdits> {
  const { dir, branch, directory } = input;
  const since = await lastCommitWithLine({ dir, ref: branch, path: directory, line: input.trailer });
  if (!since) return { since: undefined, files: [], resources: [] };
  const files = await changedBetween({ dir, from: since, to: branch, directory });
  const resources: ResourceEdit[] = [];
  const read = (ref: string, path: string) => showFile({ dir, ref, path }).catch(() => undefined);
  for (const f of files) {
    if (!YAML_FILE.test(f.path)) continue;
    const before = resourcesOf(f.status === 'added' ? undefined : await read(since, f.path), f.path);
    const after = resourcesOf(f.status === 'deleted' ? undefined : await read(branch, f.path), f.path);
    for (const [key, b] of before) {
      const a = after.get(key);
      if (!a) resources.push({ status: 'deleted', resource: b.name, file: f.path });
      else if (a.text !== b.text) resources.push({ status: 'modified', resource: b.name, file: f.path });
    }
    for (const [key, a] of after) if (!before.has(key)) resources.push({ status: 'added', resource: a.name, file: f.path });
  }
  return { since, files, resources };
}

/** The removal proposal's paragraph on them (Markdown). */
export function describeLocalEdits(edits: LocalEdits, branch: string): string {
  if (edits.since === undefined)
    return `No commit of kdelta's for this package is on ${inert(branch, 'code')} (it was not merged as kdelta proposed it): kdelta cannot tell its local edits apart; review the package before merging.`;
  const since = `\`${edits.since.slice(0, 12)}\``;
  if (edits.files.length === 0) return `Local edits since kdelta last proposed this package (${since}): none.`;
  const lines = [`Local edits since kdelta last proposed this package (${since}), which this loses:`, ''];
  for (const f of edits.files) {
    lines.push(`- ${f.status} ${inert(f.path, 'code')}`);
    for (const r of edits.resources.filter((r) => r.file === f.path)) lines.push(`  - ${r.status} ${inert(r.resource)}`);
  }
  return lines.join('\n');
}
