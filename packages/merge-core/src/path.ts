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

  /** The path `toString` printed, read back; undefined for text it never prints. */
  static parse(text: string): FieldPath | undefined {
    if (text === '.') return FieldPath.root;
    const segments: PathSegment[] = [];
    let at = 0;
    while (at < text.length) {
      const rest = text.slice(at);
      const plain = /^\.([A-Za-z_$][\w$-]*)/.exec(rest);
      if (plain) {
        segments.push({ field: plain[1]! });
        at += plain[0].length;
        continue;
      }
      const bracket = readBracket(rest);
      if (!bracket) return undefined;
      segments.push(bracket.segment);
      at += bracket.length;
    }
    return segments.length === 0 ? undefined : new FieldPath(segments);
  }
}

/** A JSON string at the start of `text`, and how long it is there. */
function readJsonString(text: string): { value: string; length: number } | undefined {
  const m = /^"(?:[^"\\]|\\.)*"/.exec(text);
  if (!m) return undefined;
  try {
    return { value: JSON.parse(m[0]) as string, length: m[0].length };
  } catch {
    return undefined;
  }
}

/** One `[...]` segment at the start of `text`: `[2]`, `["a.b"]`, `[="x"]`, `[name="web",port="80"]`. */
function readBracket(text: string): { segment: PathSegment; length: number } | undefined {
  const index = /^\[(\d+)\]/.exec(text);
  if (index) return { segment: { index: Number(index[1]) }, length: index[0].length };
  if (text.startsWith('["')) {
    const s = readJsonString(text.slice(1));
    return s && text[1 + s.length] === ']' ? { segment: { field: s.value }, length: s.length + 2 } : undefined;
  }
  if (text.startsWith('[="')) {
    const s = readJsonString(text.slice(2));
    return s && text[2 + s.length] === ']' ? { segment: { value: s.value }, length: s.length + 3 } : undefined;
  }
  const keys: (readonly [string, string])[] = [];
  let at = 1;
  if (text[0] !== '[') return undefined;
  for (;;) {
    const key = /^([^="\],[]+)=/.exec(text.slice(at));
    if (!key) return undefined;
    at += key[0].length;
    const s = readJsonString(text.slice(at));
    if (!s) return undefined;
    at += s.length;
    keys.push([key[1]!, s.value]);
    if (text[at] === ']') return { segment: { keys }, length: at + 1 };
    if (text[at] !== ',') return undefined;
    at += 1;
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
