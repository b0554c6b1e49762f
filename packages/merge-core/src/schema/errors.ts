import { KdeltaError } from '@kdelta/errors';

/** A schema input (an OpenAPI file, a CRD) that cannot be used; names where and why. */
export class SchemaError extends KdeltaError {
  override readonly name = 'SchemaError';
  declare readonly code: 'schema-invalid';
  /** Where in the input: `definitions.io.example.v1.Foo`, `objects[2].spec.names.kind`, … */
  declare readonly path: string;
  /** Why, without the location. */
  readonly reason: string;

  constructor(options: { file?: string | undefined; path: string; reason: string }) {
    const where = [options.file, options.path].filter(Boolean).join(': ');
    super({
      code: 'schema-invalid',
      file: options.file,
      path: options.path,
      message: where ? `${where}: ${options.reason}` : options.reason,
    });
    this.reason = options.reason;
  }
}
