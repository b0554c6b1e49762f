/**
 * The Kptfile as a schema for merge-core's walker, so that a Kptfile merges by the same rules,
 * strategies, pins and conflict reports as every resource. Seed 000 gives the pipeline's functions
 * their identity: `name`, else the image without its tag (or `exec`); where neither identifies
 * every function, the list is atomic (upstream's changed list replaces local's).
 */
import type { ListSchema, ObjectSchema, Schema } from '@kdelta/merge-core';
import { isScalar, type YAMLMap } from 'yaml';
import { derivedFunctionKey, type PipelineKeyMode } from './pipeline-key.js';
import { PIPELINE_LISTS } from './types.js';

function object(fields: Record<string, Schema>): ObjectSchema {
  return { kind: 'object', mapType: 'granular', field: (name) => fields[name] };
}

/** A list with no identity: replaced whole (seed 000 replaces diverged selectors whole). */
const atomicList: ListSchema = { kind: 'list', listType: 'atomic', keys: [], explicit: true, items: () => undefined };

const functionSchema = object({ selectors: atomicList, exclude: atomicList });

function text(item: YAMLMap, field: string): string | undefined {
  const node = item.get(field, true);
  return isScalar(node) && node.value !== null ? String(node.value) : undefined;
}

function functionList(mode: PipelineKeyMode): ListSchema {
  if (mode === 'none') return atomicList;
  const keyed = { kind: 'list', listType: 'map', explicit: true, items: () => functionSchema, wholeItems: true } as const;
  if (mode === 'name') return { ...keyed, keys: ['name'] };
  return {
    ...keyed,
    keys: ['key'],
    deriveKey: (item) => derivedFunctionKey({ image: text(item, 'image'), exec: text(item, 'exec') }),
  };
}

/** The Kptfile's schema, its pipeline lists keyed as `mode` says (decided over the three sides). */
export function kptfileSchema(mode: PipelineKeyMode): ObjectSchema {
  const fns = functionList(mode);
  return object({
    info: object({ readinessGates: atomicList }),
    pipeline: object(Object.fromEntries(PIPELINE_LISTS.map((list) => [list, fns]))),
    status: object({ conditions: atomicList }),
  });
}
