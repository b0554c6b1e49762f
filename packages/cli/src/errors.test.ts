import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '@kdelta/test-support';
import { describe, expect, it } from 'vitest';
import { KdeltaError, MergeInputError, parseStream, schemaRegistryFromText } from '@kdelta/merge-core';
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

describe("git-source's mirror of KdeltaError", () => {
  it('makes a GitError a KdeltaError of merge-core', () => {
    const error = thrownBy(() => assertSafeArgument('--upload-pack=x', 'ref'));
    expect(error).toBeInstanceOf(GitError);
    expect(error instanceof KdeltaError).toBe(true);
    expect(error).toMatchObject({ code: 'refused-argument' });
  });

  it('has the same fields as the original', () => {
    const init = { code: 'c', expected: 'e', received: 'r', file: 'f', document: 1, path: '.p' };
    const fromCore = new KdeltaError(init);
    const fromGit = new GitError({ code: 'failed', message: 'm' });
    const fields = (e: object) =>
      Object.getOwnPropertyNames(e)
        .filter((k) => k !== 'stack' && k !== 'message')
        .sort();
    const gitOwn = new Set(['args', 'stderr', 'exitCode']);
    expect(fields(fromGit).filter((k) => !gitOwn.has(k))).toEqual(fields(fromCore));
    expect(Object.getOwnPropertySymbols(fromGit)).toEqual(Object.getOwnPropertySymbols(fromCore));
  });

  it('is the same code as the original below its header comment', () => {
    const body = (pkg: string) => {
      const text = readFileSync(fileURLToPath(new URL(`../../${pkg}/src/kdelta-error.ts`, import.meta.url)), 'utf8');
      return text.slice(text.indexOf('const BRAND'));
    };
    expect(body('git-source')).toBe(body('merge-core'));
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
