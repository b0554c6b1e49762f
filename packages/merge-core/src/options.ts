import { collate as collateElement, type CollateOptions } from './collate/collate.js';
import type { Sources } from './collate/element.js';
import { MergeInputError, type Side } from './errors.js';
import { FieldPath } from './path.js';
import { builtinSchemas, FALLBACK_MERGE_KEYS, kustomizationSchemas, layerSchemas, schemaFromComment } from './schema/index.js';
import type { ObjectSchema, SchemaRegistry } from './schema/types.js';
import { delegatingVisitor } from './visit/delegating.js';
import type { ConflictStrategy, MergeVisitor } from './visit/visitor.js';
import { walkElement, type WalkResult } from './visit/walk.js';
import type { YamlNode } from './yaml/nodes.js';

export type { ConflictStrategy };

export interface MergeOptions {
  /** Default `upstream-wins`, kpt's behaviour. `fail` merges like upstream-wins and reports. */
  readonly strategy?: ConflictStrategy;
  /** Make lists associative by kpt's fallback keys when no schema speaks. Default true. */
  readonly inferKeys?: boolean;
  /** Extra schemas (CRDs, `--schema` files), consulted before the built-in Kubernetes kinds. */
  readonly schemas?: SchemaRegistry | undefined;
  /** Consult the built-in Kubernetes schemas. Default true. */
  readonly builtinSchemas?: boolean;
  /** The schema of the value merged (`merge3Text`), e.g. the Kptfile's; else looked up by kind. */
  readonly schema?: ObjectSchema | undefined;
}

// The Kubernetes kinds, and kustomize's Kustomization as kyaml's built-in schema has it.
const builtin = layerSchemas(builtinSchemas(), kustomizationSchemas());

export interface Engine {
  readonly visitor: MergeVisitor;
  readonly strategy: ConflictStrategy;
  merge(
    sources: Sources<YamlNode>,
    where: { file: string; document: number | undefined; files?: Partial<Record<Side, { file: string; document: number }>> },
  ): WalkResult;
}

/** Resolves the options once; merging many resources reuses the result. */
export function createEngine(options: MergeOptions = {}): Engine {
  const strategy = options.strategy ?? 'upstream-wins';
  const visitor = delegatingVisitor(strategy);
  const registry = options.builtinSchemas === false ? options.schemas : layerSchemas(options.schemas, builtin);
  const inferKeys = options.inferKeys ?? true;
  const fallbackKeys = FALLBACK_MERGE_KEYS;
  const commentSchema = (text: string) => schemaFromComment(text, builtin);
  return {
    visitor,
    strategy,
    merge(sources, where) {
      const collateOptions: CollateOptions = {
        registry,
        inferKeys,
        fallbackKeys,
        commentSchema,
        fail(code, path, side, reason) {
          const at = where.files?.[side] ?? { file: where.file, document: where.document };
          throw new MergeInputError(code, at.file, at.document, `${side} ${path.toString()}: ${reason}`, side, path.toString());
        },
      };
      const element = collateElement(sources, FieldPath.root, options.schema, collateOptions);
      return walkElement(element, { visitor });
    },
  };
}
