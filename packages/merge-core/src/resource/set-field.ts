/**
 * One field of one resource set to a value a person chose (the decision of a conflict on a
 * proposal), pinned with `# kdelta:local` or not: every other line of the file stays as it was.
 */
import { isMap, isScalar, isSeq, type Pair, type YAMLMap } from 'yaml';
import { pinPair } from '../collate/pin.js';
import { printMergedDocument } from '../emit/print.js';
import { FieldPath, type PathSegment } from '../path.js';
import { findPair, keyName, pairsOf, scalarText, type YamlNode } from '../yaml/nodes.js';
import { parseStream } from '../yaml/parse.js';
import { formatIdentity, identityOf } from './identity.js';

export interface SetFieldInput {
  /** The file's text and its name (for errors). */
  readonly text: string;
  readonly file: string;
  /** The resource as a conflict names it (`apps/Deployment default/web`). */
  readonly resource: string;
  /** The field as a conflict prints it (`.spec.replicas`, `.spec.containers[name="web"].image`). */
  readonly path: string;
  /** Its new value (plain data, as a conflict's values are). */
  readonly value: unknown;
  /** Pin the field (`# kdelta:local`): it keeps this value whatever upstream does next. */
  readonly pin: boolean;
}

export type SetFieldResult = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string };

/** The node a path segment leads to inside `node`, if it is there. */
function step(node: unknown, segment: PathSegment): unknown {
  if ('field' in segment) return isMap(node) ? findPair(node, segment.field)?.value : undefined;
  if (!isSeq(node)) return undefined;
  if ('index' in segment) return node.items[segment.index];
  if ('value' in segment) return node.items.find((item) => isScalar(item) && scalarText(item) === segment.value);
  return node.items.find(
    (item) =>
      isMap(item) &&
      segment.keys.every(([k, v]) => {
        const pair = pairsOf(item).find((p) => keyName(p.key) === k);
        return pair !== undefined && isScalar(pair.value) && scalarText(pair.value) === v;
      }),
  );
}

/** Set `input.path` of `input.resource` in a YAML stream to `input.value`; says why when it cannot. */
export function setResourceField(input: SetFieldInput): SetFieldResult {
  const path = FieldPath.parse(input.path);
  const last = path?.segments[path.segments.length - 1];
  if (!path || !last || !('field' in last)) return { ok: false, reason: `${input.path} is not a field of a map` };
  const stream = parseStream(input.text, input.file);
  const at = stream.documents.findIndex((d) => {
    const contents = d.doc.contents;
    const id = isMap(contents) ? identityOf(contents as YAMLMap) : undefined;
    return id !== undefined && formatIdentity(id) === input.resource;
  });
  const source = stream.documents[at];
  if (!source) return { ok: false, reason: `${input.file} holds no resource ${input.resource}` };
  const contents = (source.doc.contents as YamlNode).clone() as YamlNode;
  let parent: unknown = contents;
  for (const segment of path.segments.slice(0, -1)) parent = step(parent, segment);
  if (!isMap(parent)) return { ok: false, reason: `${input.resource} has no ${input.path} (nothing holds it)` };
  const node = source.doc.createNode(input.value) as YamlNode;
  let pair = findPair(parent, last.field);
  if (pair) {
    // the line's comments stay with it: only the value is the person's choice
    const old = pair.value as { comment?: string | null; commentBefore?: string | null } | null;
    if (old && typeof old === 'object') {
      if (old.comment) node.comment = old.comment;
      if (old.commentBefore) node.commentBefore = old.commentBefore;
    }
    pair.value = node;
  } else {
    parent.add(source.doc.createPair(last.field, node));
    pair = findPair(parent, last.field) as Pair<unknown, unknown>;
  }
  if (input.pin) pinPair(pair);
  const text = printMergedDocument(source, contents);
  return { ok: true, text: stream.documents.map((d, i) => (i === at ? text : d.text)).join('') };
}
