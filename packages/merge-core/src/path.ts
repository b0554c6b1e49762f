/**
 * A field path inside one resource, printed the way structured-merge-diff prints them:
 * `.spec.template.spec.containers[name="web"].image`, `.spec.args[2]`, `.metadata.finalizers[="a"]`.
 */
export type PathSegment =
  | { readonly field: string }
  | { readonly keys: readonly (readonly [string, string])[] }
  | { readonly value: string }
  | { readonly index: number };

export class FieldPath {
  static readonly root = new FieldPath([]);

  private constructor(readonly segments: readonly PathSegment[]) {}

  field(name: string): FieldPath {
    return new FieldPath([...this.segments, { field: name }]);
  }

  keyed(keys: readonly (readonly [string, string])[]): FieldPath {
    return new FieldPath([...this.segments, { keys }]);
  }

  value(value: string): FieldPath {
    return new FieldPath([...this.segments, { value }]);
  }

  index(index: number): FieldPath {
    return new FieldPath([...this.segments, { index }]);
  }

  toString(): string {
    if (this.segments.length === 0) return '.';
    return this.segments.map(formatSegment).join('');
  }
}

const plainField = /^[A-Za-z_$][\w$-]*$/;

function formatSegment(segment: PathSegment): string {
  if ('field' in segment) {
    return plainField.test(segment.field) ? `.${segment.field}` : `[${JSON.stringify(segment.field)}]`;
  }
  if ('keys' in segment) {
    return `[${segment.keys.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
  }
  if ('value' in segment) return `[=${JSON.stringify(segment.value)}]`;
  return `[${segment.index}]`;
}
