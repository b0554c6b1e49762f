import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@kdelta/test-support';
import { describe, expect, it } from 'vitest';
import { KdeltaError } from '@kdelta/errors';
import { MergeInputError, parseStream, schemaRegistryFromText } from '@kdelta/merge-core';
import { assertSafeArgument, GitError } from '@kdelta/git-source';
import { KptfileError, parseKptfile } from '@kdelta/kptfile-model';
import { PackageDocuments, VariantMutationError } from '@kdelta/variant-engine';
import { UsageError, type Io } from './command.js';
import { CliInputError, exitCodeFor, formatError } from './errors.js';
import { main } from './main.js';
import { readYamlDocuments } from './commands/variant-objects.js';
import { strategyOf, UpdateError } from '@kdelta/package-update';

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('one KdeltaError, from @kdelta/errors', () => {
  it('every package extends the same class (git-source included), not a copy of it', () => {
    const error = thrownBy(() => assertSafeArgument('--upload-pack=x', 'ref'));
    expect(error).toBeInstanceOf(GitError);
    expect(error).toMatchObject({ code: 'refused-argument' });
    // the prototype chain, not only the brand: a subclass's own `instanceof` relies on it
    const bases = [GitError, MergeInputError, KptfileError, VariantMutationError, UpdateError, UsageError, CliInputError];
    for (const cls of bases) expect(Object.getPrototypeOf(cls.prototype), cls.name).toBe(KdeltaError.prototype);
  });
});

describe("every package's errors are KdeltaErrors with a code", () => {
  const dir = tempDir('kdelta-errors-');
  writeFileSync(join(dir, 'objects.yaml'), 'a: [1\n');
  const cases: [string, () => unknown, new (...args: never[]) => Error, string][] = [
    ['merge-core MergeInputError', () => thrownBy(() => parseStream('a: [1\n', 'x.yaml')), MergeInputError, 'invalid-yaml'],
    ['merge-core SchemaError', () => thrownBy(() => schemaRegistryFromText('[1]', 's.json')), KdeltaError, 'schema-invalid'],
    [
      'kptfile-model KptfileError',
      () => thrownBy(() => parseKptfile('apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  labelz: {}\n')),
      KptfileError,
      'unknown-field',
    ],
    ['git-source GitError', () => thrownBy(() => assertSafeArgument('-x', 'ref')), GitError, 'refused-argument'],
    [
      'variant-engine VariantMutationError',
      () => thrownBy(() => new PackageDocuments(new Map()).documents('Kptfile')),
      VariantMutationError,
      'missing-file',
    ],
    ['cli UpdateError', () => thrownBy(() => strategyOf('copy-all', 'Kptfile')), UpdateError, 'unknown-strategy'],
    ['cli UsageError', () => new UsageError('--set is required'), UsageError, 'usage'],
  ];
  for (const [name, make, cls, code] of cases) {
    it(name, () => {
      const error = make();
      expect(error).toBeInstanceOf(cls);
      expect(error instanceof KdeltaError).toBe(true);
      expect((error as KdeltaError).code).toBe(code);
      expect((error as KdeltaError).message).not.toBe('');
    });
  }

  it('cli CliInputError', async () => {
    const error = await rejectionOf(readYamlDocuments(join(dir, 'objects.yaml'), 'objects.yaml'));
    expect(error).toBeInstanceOf(CliInputError);
    expect(error).toMatchObject({ code: 'invalid-yaml', file: 'objects.yaml', document: 1 });
  });

  it('a KptfileError takes its code, file and path from the first issue', () => {
    const error = thrownBy(() =>
      parseKptfile('apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  labelz: {}\n', 'pkgs/web/Kptfile'),
    ) as KptfileError;
    expect(error).toMatchObject({ code: 'unknown-field', file: 'pkgs/web/Kptfile', path: '.metadata.labelz', field: 'metadata.labelz' });
    expect(error.issues.length).toBeGreaterThan(0);
  });
});

describe('the CLI maps errors in one place', () => {
  it('a usage error: exit 1 and how to get the usage', () => {
    const error = new UsageError('--set <pvs.yaml> is required');
    expect(exitCodeFor(error)).toBe(1);
    expect(formatError(error, 'kdelta variantset expand')).toBe(
      'kdelta variantset expand: --set <pvs.yaml> is required\nRun `kdelta variantset expand --help` for usage.\n',
    );
  });

  it('a KdeltaError: its message, with the location in front when the message does not say it', () => {
    const bare = new KdeltaError({ code: 'wrong-type', message: 'expected a map, got a list', file: 'Kptfile', path: '.pipeline' });
    expect(formatError(bare, 'kdelta merge3')).toBe('kdelta merge3: Kptfile: .pipeline: expected a map, got a list\n');
    const located = new MergeInputError('not-a-mapping', 'app/deploy.yaml', 1, 'local document is not a mapping', 'local');
    expect(formatError(located, 'kdelta merge3')).toBe('kdelta merge3: app/deploy.yaml: document 1: local document is not a mapping\n');
    expect(exitCodeFor(located)).toBe(1);
  });

  it('an unknown error: its message, and its stack only with KDELTA_DEBUG', () => {
    const error = new TypeError('boom');
    expect(exitCodeFor(error)).toBe(1);
    expect(formatError(error, 'kdelta pkg get')).toBe('kdelta pkg get: boom\n');
    expect(formatError(error, 'kdelta pkg get', { KDELTA_DEBUG: '1' })).toContain(`kdelta pkg get: boom\n${error.stack}`);
    expect(formatError('not an error', 'kdelta pkg get')).toBe('kdelta pkg get: not an error\n');
  });

  it('main prints a bad input file by name and exits 1', async () => {
    const cwd = tempDir('kdelta-errors-main-');
    writeFileSync(join(cwd, 'pv.yaml'), 'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata: [1\n');
    let stderr = '';
    const io: Io = { stdout: () => undefined, stderr: (t) => void (stderr += t), cwd, env: {} };
    const code = await main(['variant', 'apply', '--variant', 'pv.yaml', '--package', '.'], io);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^kdelta variant apply: pv\.yaml: document 1: invalid YAML at line \d+: /);
    expect(stderr).not.toContain('--help');
  });
});
