import { parseYamlDocument } from '@kdelta/merge-core';
import { RunError } from '../errors.js';

/** The Kptfile annotations a run reads and writes on a downstream package. */

/** On the downstream Kptfile, next to the owner annotation: what to do when the variant is gone. */
export const DELETION_POLICY_ANNOTATION = 'kdelta.dev/deletion-policy';

export function kptfileAnnotations(text: string | undefined): Record<string, string> {
  if (text === undefined) return {};
  const v = parseYamlDocument(text).toJS() as { metadata?: { annotations?: Record<string, string> } } | null;
  return v?.metadata?.annotations ?? {};
}

export function lockCommit(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const v = parseYamlDocument(text).toJS() as { upstreamLock?: { git?: { commit?: string } } } | null;
  return v?.upstreamLock?.git?.commit;
}

/** Set (or with undefined, remove) annotations on a Kptfile, keeping its layout and comments. */
export function setKptfileAnnotations(text: string, annotations: Record<string, string | undefined>): string {
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0) throw new RunError('invalid-kptfile', `Kptfile: ${doc.errors[0]!.message.split('\n')[0]}`);
  for (const [k, v] of Object.entries(annotations)) {
    if (v === undefined) {
      if (doc.hasIn(['metadata', 'annotations', k])) doc.deleteIn(['metadata', 'annotations', k]);
    } else if (doc.getIn(['metadata', 'annotations', k]) !== v) {
      doc.setIn(['metadata', 'annotations', k], v);
    }
  }
  const anns = doc.getIn(['metadata', 'annotations']) as { items?: unknown[] } | undefined;
  if (anns && Array.isArray(anns.items) && anns.items.length === 0) doc.deleteIn(['metadata', 'annotations']);
  return doc.toString();
}
