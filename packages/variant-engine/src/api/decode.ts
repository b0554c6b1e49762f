import type { KubeObject, PackageVariant, PackageVariantSet } from './types.js';

/**
 * Structural decoding of Porch objects read from YAML: every field is checked against the
 * shape of the Go type, so a wrong type is reported with its field path
 * (`spec.targets[0].template.labels.foo: expected string, got number`) instead of failing later.
 * Absent and `null` are the same (Go nil). Unknown fields are dropped from the value, as the Go
 * decoder does, and listed in `unknownFields` with their path, so that a command can refuse them
 * (a typo or a field in the wrong place would otherwise be lost without a word).
 */
type Shape =
  | 'string'
  | 'revision'
  | 'boolean'
  | 'stringMap'
  | 'any'
  | { readonly list: Shape }
  | { readonly object: Readonly<Record<string, Shape>>; readonly open?: boolean };

const str = 'string' as const;
const strings: Shape = { list: str };
const mapExpr: Shape = { object: { key: str, value: str, keyExpr: str, valueExpr: str } };
const labelSelector = {
  matchLabels: 'stringMap',
  matchExpressions: { list: { object: { key: str, operator: str, values: strings } } },
} as const satisfies Record<string, Shape>;
const kptSelector: Shape = {
  object: { apiVersion: str, kind: str, name: str, namespace: str, labels: 'stringMap', annotations: 'stringMap' },
};
/** A Kptfile pipeline function (kpt.dev/v1 `Function`). */
const fn = (extra: Record<string, Shape> = {}): Shape => ({
  object: {
    name: str,
    image: str,
    exec: str,
    configPath: str,
    configMap: 'stringMap',
    selectors: { list: kptSelector },
    exclude: { list: kptSelector },
    ...extra,
  },
});
const metadata: Shape = {
  object: {
    name: str,
    namespace: str,
    uid: str,
    labels: 'stringMap',
    annotations: 'stringMap',
    ownerReferences: {
      list: { object: { apiVersion: str, kind: str, name: str, uid: str, controller: 'boolean', blockOwnerDeletion: 'boolean' } },
    },
    finalizers: strings,
    // what the API server sets (an object saved with `kubectl get -o yaml`)
    generateName: str,
    resourceVersion: str,
    generation: 'any',
    creationTimestamp: 'any',
    deletionTimestamp: 'any',
    deletionGracePeriodSeconds: 'any',
    selfLink: str,
    managedFields: 'any',
  },
};
const upstream: Shape = { object: { repo: str, package: str, revision: 'revision', workspaceName: str } };

const packageVariant: Shape = {
  object: {
    apiVersion: str,
    kind: str,
    metadata,
    spec: {
      object: {
        upstream,
        downstream: { object: { repo: str, package: str } },
        adoptionPolicy: str,
        deletionPolicy: str,
        labels: 'stringMap',
        annotations: 'stringMap',
        packageContext: { object: { data: 'stringMap', removeKeys: strings } },
        pipeline: { object: { mutators: { list: fn() }, validators: { list: fn() } } },
        injectors: { list: { object: { group: str, version: str, kind: str, name: str } } },
      },
    },
    status: 'any',
  },
};

const template: Shape = {
  object: {
    downstream: { object: { repo: str, package: str, repoExpr: str, packageExpr: str } },
    adoptionPolicy: str,
    deletionPolicy: str,
    labels: 'stringMap',
    labelExprs: { list: mapExpr },
    annotations: 'stringMap',
    annotationExprs: { list: mapExpr },
    packageContext: {
      object: { data: 'stringMap', removeKeys: strings, dataExprs: { list: mapExpr }, removeKeyExprs: strings },
    },
    pipeline: {
      object: {
        validators: { list: fn({ configMapExprs: { list: mapExpr } }) },
        mutators: { list: fn({ configMapExprs: { list: mapExpr } }) },
      },
    },
    injectors: { list: { object: { group: str, version: str, kind: str, name: str, nameExpr: str } } },
  },
};

const packageVariantSet: Shape = {
  object: {
    apiVersion: str,
    kind: str,
    metadata,
    spec: {
      object: {
        upstream,
        targets: {
          list: {
            object: {
              repositories: { list: { object: { name: str, packageNames: strings } } },
              repositorySelector: { object: labelSelector },
              objectSelector: { object: { apiVersion: str, kind: str, name: str, ...labelSelector } },
              // the package names a selector target instantiates in each selected repository (seed 004)
              packageNames: strings,
              template,
            },
          },
        },
      },
    },
    status: 'any',
  },
};

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'map';
  return typeof v;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function decode(value: unknown, shape: Shape, path: string, errors: string[], unknown: string[] = []): unknown {
  if (value === null || value === undefined) return undefined;
  if (shape === 'any') return value;
  if (shape === 'string' || shape === 'boolean') {
    if (typeof value === shape) return value;
    errors.push(`${path}: expected ${shape}, got ${typeName(value)}`);
    return undefined;
  }
  if (shape === 'revision') {
    if (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))) return value;
    errors.push(`${path}: expected an integer or a string, got ${typeName(value)}`);
    return undefined;
  }
  if (shape === 'stringMap') {
    if (typeName(value) !== 'map') {
      errors.push(`${path}: expected a map of strings, got ${typeName(value)}`);
      return undefined;
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (typeof v === 'string') out[k] = v;
      else errors.push(`${join(path, k)}: expected string, got ${typeName(v)} (quote the value)`);
    }
    return out;
  }
  if ('list' in shape) {
    if (!Array.isArray(value)) {
      errors.push(`${path}: expected a list, got ${typeName(value)}`);
      return undefined;
    }
    return value.map((item, i) => decode(item, shape.list, `${path}[${i}]`, errors, unknown) ?? emptyOf(shape.list));
  }
  if (typeName(value) !== 'map') {
    errors.push(`${path}: expected a map, got ${typeName(value)}`);
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const fieldShape = shape.object[k];
    if (fieldShape === undefined) {
      if (shape.open) out[k] = v;
      else unknown.push(`${join(path, k)}: unknown field (expected one of ${Object.keys(shape.object).join(', ')})`);
      continue;
    }
    const decoded = decode(v, fieldShape, join(path, k), errors, unknown);
    if (decoded !== undefined) out[k] = decoded;
  }
  return out;
}

/** A null list item decodes to the zero value of its type, as in Go. */
function emptyOf(shape: Shape): unknown {
  if (shape === 'string') return '';
  if (typeof shape === 'object' && 'object' in shape) return {};
  return undefined;
}

export interface Decoded<T> {
  readonly value: T;
  /** Type errors, each starting with the field path. Empty when the object is well formed. */
  readonly errors: readonly string[];
  /** Fields the API does not have, each as `<path>: unknown field (...)`; dropped from `value`. */
  readonly unknownFields: readonly string[];
}

function decodeRoot<T>(value: unknown, shape: Shape): Decoded<T> {
  const errors: string[] = [];
  const unknownFields: string[] = [];
  if (typeName(value) !== 'map') {
    return { value: {} as T, errors: [`expected a KRM object (a map), got ${typeName(value)}`], unknownFields };
  }
  return { value: decode(value, shape, '', errors, unknownFields) as T, errors, unknownFields };
}

export function decodePackageVariant(value: unknown): Decoded<PackageVariant> {
  return decodeRoot(value, packageVariant);
}

export function decodePackageVariantSet(value: unknown): Decoded<PackageVariantSet> {
  return decodeRoot(value, packageVariantSet);
}

/** Any object: only the metadata is checked (labels and annotations must be strings). */
export function decodeObject(value: unknown): Decoded<KubeObject> {
  if (typeName(value) !== 'map') return { value: {}, errors: [`expected a KRM object (a map), got ${typeName(value)}`], unknownFields: [] };
  const errors: string[] = [];
  const raw = value as Record<string, unknown>;
  const meta = decode(raw.metadata, metadata, 'metadata', errors);
  const out: KubeObject = { ...raw };
  if (meta !== undefined) out.metadata = meta as KubeObject['metadata'];
  else delete out.metadata;
  return { value: out, errors, unknownFields: [] };
}
