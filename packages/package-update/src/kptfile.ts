import { stringifyYaml } from '@kdelta/merge-core';
import { withoutCredentials } from '@kdelta/git-source';
import {
  type Kptfile,
  type PackageView,
  type ParsedKptfile,
  UPDATE_STRATEGIES,
  type UpdateStrategy as KptfileStrategy,
  parseKptfile,
  printKptfile,
  readKptfileText,
  KPTFILE_NAME,
} from '@kdelta/kptfile-model';
import { UpdateError } from './errors.js';

/** The strategies this engine runs: kptfile-model's list, without copy-merge (not one of seed 001's three). */
export type UpdateStrategy = Exclude<KptfileStrategy, 'copy-merge'>;
export const updateStrategies: readonly UpdateStrategy[] = UPDATE_STRATEGIES.filter((s): s is UpdateStrategy => s !== 'copy-merge');

export function isUpdateStrategy(value: unknown): value is UpdateStrategy {
  return typeof value === 'string' && (updateStrategies as readonly string[]).includes(value);
}

/** The strategy a Kptfile names (resource-merge when it names none); an unknown one is an error naming the file. */
export function strategyOf(value: unknown, file: string): UpdateStrategy {
  if (value === undefined || value === '') return 'resource-merge';
  if (isUpdateStrategy(value)) return value;
  throw new UpdateError(
    `${file}: unrecognized update strategy ${JSON.stringify(value)} (expected one of ${updateStrategies.join(', ')})`,
    'unknown-strategy',
    file,
  );
}

/**
 * A Kptfile's text, read strictly (`readKptfileText`, as every kdelta command reads it): an
 * unknown field, a wrong type, apiVersion or kind is an error naming `file` and the field.
 */
export function kptfileOf(text: string, file: string): ParsedKptfile {
  return readKptfileText(text, file);
}

/** A package's Kptfile, read strictly; `file` names it in errors. */
export function readKptfile(pkg: PackageView, file: string): ParsedKptfile | undefined {
  const text = pkg.kptfileText();
  return text === undefined ? undefined : kptfileOf(text, file);
}

export interface UpstreamRecord {
  readonly repo: string;
  readonly directory: string;
  readonly ref: string;
  readonly updateStrategy?: KptfileStrategy | undefined;
}

/**
 * The Kptfile with `upstream` (and, when `commit` is given, `upstreamLock`) set, printed over its
 * text. The repository is recorded without credentials, whatever the caller had: a token that
 * came in a URL (or in a Kptfile written by an older tool) is used once and never written down.
 */
export function withUpstream(
  parsed: ParsedKptfile | undefined,
  name: string | undefined,
  upstream: UpstreamRecord | undefined,
  commit: string | undefined,
): string {
  const base: ParsedKptfile =
    parsed ?? parseKptfile(`apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${stringifyYaml(name ?? 'pkg').trim()}\n`);
  const next: Kptfile = structuredClone(base.kptfile);
  if (name !== undefined) next.metadata = { ...next.metadata, name };
  if (upstream) {
    next.upstream = {
      type: 'git',
      git: { repo: upstream.repo, directory: upstream.directory, ref: upstream.ref },
      updateStrategy: upstream.updateStrategy ?? next.upstream?.updateStrategy ?? 'resource-merge',
    };
    if (commit !== undefined) {
      next.upstreamLock = { type: 'git', git: { repo: upstream.repo, directory: upstream.directory, ref: upstream.ref, commit } };
    }
  }
  if (next.upstream?.git?.repo) next.upstream.git.repo = withoutCredentials(next.upstream.git.repo);
  if (next.upstreamLock?.git?.repo) next.upstreamLock.git.repo = withoutCredentials(next.upstreamLock.git.repo);
  return printKptfile(base, orderKeys(next));
}

/** kpt's key order for a Kptfile. */
function orderKeys(k: Kptfile): Kptfile {
  const order = ['apiVersion', 'kind', 'metadata', 'upstream', 'upstreamLock', 'info', 'pipeline', 'inventory', 'status'];
  const out: Record<string, unknown> = {};
  for (const key of order) if ((k as Record<string, unknown>)[key] !== undefined) out[key] = (k as Record<string, unknown>)[key];
  for (const [key, v] of Object.entries(k)) if (!(key in out)) out[key] = v;
  return out as Kptfile;
}

export const KPTFILE = KPTFILE_NAME;

/** `.yaml`/`.yml` files other than the Kptfile: where resources are. */
export function isKrmPath(path: string): boolean {
  const base = path.split('/').pop() ?? '';
  return base !== KPTFILE && /\.ya?ml$/i.test(base);
}

/**
 * Which files of a package are KRM resources, for an update whose sides are `packages`: `.yaml`/
 * `.yml` files other than the Kptfile that no side's `.krmignore` names. A file one side ignores is
 * a plain file on every side, so that the three sides agree on what it is; kpt reads an ignored
 * file as no resource (a function example's `.expected/results.yaml`).
 */
export function krmFileTest(...packages: readonly PackageView[]): (path: string) => boolean {
  const ignores = packages.flatMap((p) => p.krmIgnore() ?? []);
  return (path) => isKrmPath(path) && !ignores.some((i) => i.ignores(path));
}
