/**
 * The one error contract of kdelta's packages: every error they throw is a `KdeltaError` with a
 * stable `code` and a message that says what failed, what was expected and what was received,
 * and, where known, the file, the document and the field path.
 *
 * It lives in this leaf package, which imports nothing, so that every package (git-source, which
 * may import no other, included) extends the one class instead of a copy. `instanceof KdeltaError`
 * checks a brand rather than the prototype: two installs of this package in one dependency tree
 * are two classes, and an error from either must still be a `KdeltaError` to both.
 */

const BRAND: unique symbol = Symbol.for('kdelta.error');

export interface KdeltaErrorInit {
  /** Stable, kebab-case: `invalid-yaml`, `unknown-revision`, … Callers branch on it. */
  readonly code: string;
  /** The whole message; composed from the fields below when absent. */
  readonly message?: string | undefined;
  /** What failed, in words (`not a mapping`); the code's words when absent and nothing else is said. */
  readonly reason?: string | undefined;
  readonly expected?: string | undefined;
  readonly received?: string | undefined;
  readonly file?: string | undefined;
  /** The document: its index in the stream, or a description such as `apps/Deployment web`. */
  readonly document?: number | string | undefined;
  /** The field path, printed like `.spec.containers[name="app"].image`. */
  readonly path?: string | undefined;
  readonly cause?: unknown;
}

export class KdeltaError extends Error {
  override readonly name: string = 'KdeltaError';
  readonly code: string;
  readonly expected: string | undefined;
  readonly received: string | undefined;
  readonly file: string | undefined;
  readonly document: number | string | undefined;
  readonly path: string | undefined;

  constructor(init: KdeltaErrorInit) {
    super(init.message ?? composeMessage(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.expected = init.expected;
    this.received = init.received;
    this.file = init.file;
    this.document = init.document;
    this.path = init.path;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * `err instanceof KdeltaError` holds for errors of any copy of this class (a second install of
   * this package); a subclass keeps the ordinary prototype check.
   */
  static override [Symbol.hasInstance]<T>(this: abstract new (...args: never[]) => T, value: unknown): value is T {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was asked about; a subclass must keep the prototype check
    if ((this as unknown) !== KdeltaError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return isKdeltaError(value);
  }
}

export function isKdeltaError(value: unknown): value is KdeltaError {
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
}

/** `Kptfile: document 2: .pipeline: expected a map, got a list`. */
export function composeMessage(init: Omit<KdeltaErrorInit, 'message' | 'cause'>): string {
  const said = [init.expected === undefined ? '' : `expected ${init.expected}`, init.received === undefined ? '' : `got ${init.received}`]
    .filter(Boolean)
    .join(', ');
  const what = init.reason ?? (said ? '' : init.code.replace(/-/g, ' '));
  return [...locationParts(init), what, said].filter(Boolean).join(': ');
}

/** The known parts of where: file, document, field path. */
export function locationParts(at: {
  readonly file?: string | undefined;
  readonly document?: number | string | undefined;
  readonly path?: string | undefined;
}): string[] {
  const document = at.document === undefined ? '' : typeof at.document === 'number' ? `document ${at.document}` : at.document;
  return [at.file ?? '', document, at.path ?? ''].filter(Boolean);
}
