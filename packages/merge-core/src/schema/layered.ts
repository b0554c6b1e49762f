import type { DefinitionSource, GroupVersionKind, ObjectSchema, Schema, SchemaRegistry, SchemaSource } from './types.js';

/**
 * Registries in order of precedence: the first that knows a kind (or a definition name) wins.
 * Typical order: `--schema` files, then the package's CRDs, then the built-ins.
 */
export function layerSchemas(...registries: readonly (SchemaRegistry | undefined)[]): SchemaSource {
  const layers = registries.filter((r): r is SchemaRegistry => r !== undefined);
  return {
    lookup(gvk: GroupVersionKind): ObjectSchema | undefined {
      for (const r of layers) {
        const s = r.lookup(gvk);
        if (s !== undefined) return s;
      }
      return undefined;
    },
    definition(name: string): Schema | undefined {
      for (const r of layers) {
        const s = isDefinitionSource(r) ? r.definition(name) : undefined;
        if (s !== undefined) return s;
      }
      return undefined;
    },
  };
}

export function isDefinitionSource(value: unknown): value is DefinitionSource {
  return typeof value === 'object' && value !== null && typeof (value as DefinitionSource).definition === 'function';
}
