import type { ListSchema, ObjectSchema, Schema } from '../types.js';

/** Follows a dotted path; `[]` steps into list items: `spec.template.spec.containers[].ports`. */
export function at(root: Schema | undefined, path: string): Schema | undefined {
  let s: Schema | undefined = root;
  for (const step of path.split('.').filter(Boolean)) {
    const name = step.replace(/\[\]$/, '');
    s = s?.kind === 'object' ? s.field(name) : undefined;
    if (step.endsWith('[]')) s = s?.kind === 'list' ? s.items() : undefined;
  }
  return s;
}

export function listAt(root: Schema | undefined, path: string): ListSchema {
  const s = at(root, path);
  if (s?.kind !== 'list') throw new Error(`${path}: expected a list schema, got ${s?.kind ?? 'nothing'}`);
  return s;
}

export function objectAt(root: Schema | undefined, path: string): ObjectSchema {
  const s = at(root, path);
  if (s?.kind !== 'object') throw new Error(`${path}: expected an object schema, got ${s?.kind ?? 'nothing'}`);
  return s;
}

/** listType and keys only, for compact assertions. */
export function shape(l: ListSchema): { listType: string; keys: readonly string[]; explicit: boolean } {
  return { listType: l.listType, keys: [...l.keys], explicit: l.explicit };
}
