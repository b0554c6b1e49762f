/**
 * Table-driven tests of one visitor on one kind of node. Each row gives the value of a field `f`
 * on each side (YAML text; absent: the field is absent), the decision the visitor makes for `f`,
 * and what the merge makes of it: `f`'s merged value (as JSON; undefined: absent) and every
 * conflict and decision reported, as `<path> <winner>` or `<path> pinned`.
 */
import { expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { collate } from '../../collate/collate.js';
import type { Element } from '../../collate/element.js';
import { FieldPath } from '../../path.js';
import type { ListSchema, ObjectSchema, Schema } from '../../schema/types.js';
import type { YamlNode } from '../../yaml/nodes.js';
import { delegatingVisitor } from '../delegating.js';
import type { CollectionDecision, ConflictStrategy, LeafDecision, MergeVisitor } from '../visitor.js';
import { walkElement } from '../walk.js';

export type NodeKind = 'scalar' | 'map' | 'associative list' | 'set' | 'atomic list';

export interface Row {
  readonly name: string;
  readonly origin?: string;
  readonly upstream?: string;
  readonly local?: string;
  readonly decision: LeafDecision | CollectionDecision;
  readonly expected: unknown;
  readonly reports?: readonly string[];
}

const list = (listType: ListSchema['listType'], keys: string[] = []): ListSchema => ({
  kind: 'list',
  listType,
  keys,
  explicit: true,
  items: () => undefined,
});

const fieldSchema: Record<NodeKind, Schema | undefined> = {
  scalar: undefined,
  map: { kind: 'object', mapType: 'granular', field: () => undefined },
  'associative list': list('map', ['name']),
  set: list('set'),
  'atomic list': list('atomic'),
};

const rootSchema = (kind: NodeKind): ObjectSchema => ({
  kind: 'object',
  mapType: 'granular',
  field: (name) => (name === 'f' ? fieldSchema[kind] : undefined),
});

/**
 * The document `f: <value>` (or `g: 0` alone when the field is absent) for one side. A block
 * value's first line may be a comment: it goes after `f:` (`f: # kdelta:local`).
 */
function side(value: string | undefined): YamlNode {
  if (value === undefined) return parseDocument('g: 0\n').contents as YamlNode;
  const [first = '', ...rest] = value.split('\n');
  const block = rest.length > 0 || first.startsWith('- ') || /^\w+: /.test(first);
  const head = first.startsWith('#') ? ` ${first}` : '';
  const lines = first.startsWith('#') ? rest : [first, ...rest];
  const text = block ? `g: 0\nf:${head}\n${lines.map((l) => `  ${l}`).join('\n')}\n` : `g: 0\nf: ${value}\n`;
  return parseDocument(text).contents as YamlNode;
}

function collated(kind: NodeKind, row: Row): Element {
  return collate({ origin: side(row.origin), upstream: side(row.upstream), local: side(row.local) }, FieldPath.root, rootSchema(kind), {
    inferKeys: false,
    fallbackKeys: [],
    fail: (_code, path, s, reason) => {
      throw new Error(`${s} ${path.toString()}: ${reason}`);
    },
  });
}

function fieldOf(root: Element): Element {
  if (root.kind !== 'map') throw new Error('the root is not a map');
  const field = root.fields.find((f) => f.name === 'f');
  if (!field) throw new Error('no field f on any side');
  return field.value;
}

function decide(visitor: MergeVisitor, e: Element): LeafDecision | CollectionDecision {
  if (e.kind === 'leaf') return visitor.leaf(e);
  return e.kind === 'map' ? visitor.map(e) : visitor.list(e);
}

/**
 * One `it` per row: `visitor` decides `f` as the row says, and the merge with `strategy` (the
 * delegating visitor, which hands `f` to `visitor`) yields the row's value and reports.
 */
export function visitorTable(kind: NodeKind, visitor: MergeVisitor, strategy: ConflictStrategy, rows: readonly Row[]): void {
  for (const row of rows) {
    it(`${kind}: ${row.name}`, () => {
      const root = collated(kind, row);
      const element = fieldOf(root);
      expect(element.kind).toBe(kind === 'scalar' || kind === 'atomic list' ? 'leaf' : kind === 'map' ? 'map' : 'list');
      expect(decide(visitor, element)).toEqual(row.decision);
      const result = walkElement(root, { visitor: delegatingVisitor(strategy) });
      const merged = (result.node as { toJSON(): Record<string, unknown> } | undefined)?.toJSON();
      expect(merged?.f).toEqual(row.expected);
      const reports = [
        ...result.conflicts.map((c) => `${c.path.toString()} ${c.winner}-won`),
        ...result.decisions.map((d) => `${d.path.toString()} pinned`),
      ];
      expect(reports).toEqual(row.reports ?? []);
    });
  }
}
