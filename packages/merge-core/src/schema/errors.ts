/** A schema input (an OpenAPI file, a CRD) that cannot be used; names where and why. */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
  readonly code = 'schema-invalid';
  /** The file, when known. */
  readonly file: string | undefined;
  /** Where in the input: `definitions.io.example.v1.Foo`, `objects[2].spec.names.kind`, … */
  readonly path: string;
  /** Why, without the location. */
  readonly reason: string;

  constructor(options: { file?: string | undefined; path: string; reason: string }) {
    const where = [options.file, options.path].filter(Boolean).join(': ');
    super(where ? `${where}: ${options.reason}` : options.reason);
    this.file = options.file;
    this.path = options.path;
    this.reason = options.reason;
  }
}
