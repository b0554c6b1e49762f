/**
 * The built-in Kubernetes kinds (v1.21.2), from the generated compact table, plus the
 * Kustomization kind that kyaml's builtin schema also knows.
 */
import { BUILTIN_TABLE } from './builtin.generated.js';
import type { BuiltinTable, TableObject, TableType } from './builtin-table.js';
import { JsonSchemaConverter } from './json-schema.js';
import type { GroupVersionKind, ListSchema, ListType, MapType, ObjectSchema, Schema, SchemaSource } from './types.js';
import { pickVersion } from './versions.js';

class TableObjectSchema implements ObjectSchema {
  readonly kind = 'object' as const;
  readonly mapType: MapType;
  private readonly fields = new Map<string, Schema | undefined>();

  constructor(
    private readonly t: TableObject,
    private readonly reg: TableRegistry,
  ) {
    this.mapType = t.m ?? 'granular';
  }

  field(name: string): Schema | undefined {
    if (this.fields.has(name)) return this.fields.get(name);
    const f = this.t.f;
    const t = f !== undefined && Object.hasOwn(f, name) ? f[name] : this.t.a;
    const schema = t === undefined ? undefined : this.reg.node(t);
    this.fields.set(name, schema);
    return schema;
  }
}

class TableListSchema implements ListSchema {
  readonly kind = 'list' as const;
  readonly listType: ListType;
  readonly keys: readonly string[];
  readonly explicit: boolean;
  private item: Schema | undefined | null = null;

  constructor(
    private readonly itemType: TableType | undefined,
    listType: ListType,
    keys: readonly string[] | undefined,
    explicit: boolean,
    private readonly reg: TableRegistry,
  ) {
    this.listType = listType;
    this.keys = keys ?? [];
    this.explicit = explicit;
  }

  items(): Schema | undefined {
    if (this.item === null) this.item = this.itemType === undefined ? undefined : this.reg.node(this.itemType);
    return this.item;
  }
}

/** A registry over a generated table: node objects built on first use and kept. */
export class TableRegistry implements SchemaSource {
  private readonly defNodes: (ObjectSchema | undefined)[] = [];
  private kinds: Map<string, readonly (readonly [string, number])[]> | undefined;
  private names: Map<string, number> | undefined;

  constructor(private readonly table: BuiltinTable) {}

  lookup(gvk: GroupVersionKind): ObjectSchema | undefined {
    this.kinds ??= new Map(this.table.kinds.map(([group, kind, versions]) => [`${group}/${kind}`, versions]));
    const versions = this.kinds.get(`${gvk.group}/${gvk.kind}`);
    if (versions === undefined) return undefined;
    const index = pickVersion(versions, gvk.version);
    return index === undefined ? undefined : this.def(index);
  }

  definition(name: string): Schema | undefined {
    if (this.names === undefined) {
      this.names = new Map();
      this.table.defs.forEach(([names], i) => {
        for (const n of names) this.names!.set(n, i);
      });
    }
    const index = this.names.get(name);
    return index === undefined ? undefined : this.def(index);
  }

  /** @internal */
  def(index: number): ObjectSchema | undefined {
    let node = this.defNodes[index];
    if (node === undefined) {
      const entry = this.table.defs[index];
      if (entry === undefined) return undefined;
      node = new TableObjectSchema(entry[1], this);
      this.defNodes[index] = node;
    }
    return node;
  }

  /** @internal */
  node(t: TableType): Schema | undefined {
    if (typeof t === 'number') return this.def(t);
    if ('l' in t) return new TableListSchema(t.i, t.l, t.k, t.x === 1, this);
    return new TableObjectSchema(t, this);
  }
}

let builtin: SchemaSource | undefined;

/**
 * The built-in Kubernetes kinds (v1.21.2) and kustomize's Kustomization, as kyaml's builtin
 * OpenAPI knows them. Looked up by group and kind; the version only chooses between versions
 * whose definitions differ (the exact version, else the newest). One shared, lazily built
 * instance.
 */
export function builtinSchemas(): SchemaSource {
  if (builtin === undefined) {
    const kube = new TableRegistry(BUILTIN_TABLE);
    const kust = kustomizationSchemas();
    builtin = {
      lookup: (gvk) => kube.lookup(gvk) ?? kust.lookup(gvk),
      definition: (name) => kube.definition(name) ?? kust.definition(name),
    };
  }
  return builtin;
}

const KUSTOMIZATION_GROUP = 'kustomize.config.k8s.io';
const KUSTOMIZATION_DEFINITION = 'io.k8s.api.kustomize.v1beta1.Kustomization';

/** Generators are merged by name (x-kubernetes-patch-merge-key: name, as in kyaml's schema). */
const GENERATOR_LIST = {
  type: 'array',
  items: { type: 'object' },
  'x-kubernetes-patch-merge-key': 'name',
  'x-kubernetes-patch-strategy': 'merge',
} as const;
const KUSTOMIZATION = {
  type: 'object',
  properties: { configMapGenerator: GENERATOR_LIST, secretGenerator: GENERATOR_LIST },
} as const;

/**
 * kustomize's `Kustomization` (kustomize.config.k8s.io, any version): `configMapGenerator` and
 * `secretGenerator` are associative lists keyed by `name`; the merge needs nothing else from it.
 */
export function kustomizationSchemas(): SchemaSource {
  const converter = new JsonSchemaConverter(() => undefined);
  const root = converter.convert(KUSTOMIZATION) as ObjectSchema;
  return {
    lookup: (gvk) => (gvk.group === KUSTOMIZATION_GROUP && gvk.kind === 'Kustomization' ? root : undefined),
    definition: (name) => (name === KUSTOMIZATION_DEFINITION ? root : undefined),
  };
}
