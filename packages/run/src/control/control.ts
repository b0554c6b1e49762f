import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MergeInputError, parseYamlStream, yamlDocumentValue } from '@kdelta/merge-core';
import {
  checkPackageVariant,
  checkPackageVariantSet,
  decodeObject,
  PACKAGE_VARIANT_API_VERSION,
  PACKAGE_VARIANT_SET_API_VERSION,
  REPOSITORY_API_VERSION,
  type KubeObject,
  type PackageVariant,
  type PackageVariantSet,
} from '@kdelta/variant-engine';
import { isDirectory, listFiles } from '@kdelta/kptfile-model';
import { checkSettings, NO_SETTINGS, type CheckedSettings } from '../settings/settings.js';
import { runSettingsSource } from '../settings/settings-sources.js';
import {
  ControlError,
  describeSource,
  fieldPath,
  formatIssue,
  issueLine,
  type ControlIssue,
  type RepositorySpec,
  type Source,
  type Sourced,
  lineOf,
} from './control-source.js';
import { checkPolicyReferences, checkUpdatePolicy } from '../policy/policy-check.js';
import {
  DOWNSTREAM_POLICY_FILE,
  DOWNSTREAM_POLICY_KIND,
  POLICY_API_VERSION,
  UPDATE_POLICY_KIND,
  type UpdatePolicy,
} from '../policy/policy.js';

/** Where the control resources live in the control repository, unless told otherwise. */
export {
  ControlError,
  describeSource,
  fieldPath,
  formatIssue,
  issueLine,
  type ControlIssue,
  type RepositorySpec,
  type Source,
  type Sourced,
};

export const DEFAULT_CONFIG_DIR = '.kdelta';

/**
 * The control resources of a run, read from the config directory of the control repository
 * (default `.kdelta/`): Porch's Repository, PackageVariant and PackageVariantSet, kdelta's
 * RunSettings, and any other object (selector targets, injection sources).
 */

export const RUN_SETTINGS_API_VERSION = 'kdelta.dev/v1alpha1';
export const RUN_SETTINGS_KIND = 'RunSettings';
/** On a PackageVariant or PackageVariantSet: `highest-semver` follows the upstream's highest semver tag. */
export const UPSTREAM_POLICY_ANNOTATION = 'kdelta.dev/upstream-policy';
/**
 * On a PackageVariant or PackageVariantSet that follows releases (no `spec.upstream.revision`, or
 * highest-semver): `"true"` lets a pre-release tag (`v1.0.0-rc.1`) be the latest release.
 */
export const UPSTREAM_PRERELEASES_ANNOTATION = 'kdelta.dev/upstream-prereleases';

export interface ControlConfig {
  /** The config directory, absolute. */
  readonly dir: string;
  readonly repositories: readonly RepositorySpec[];
  readonly variants: readonly Sourced<PackageVariant>[];
  readonly sets: readonly Sourced<PackageVariantSet>[];
  /** Every object, Repositories included, for selectors and injection (as variant-engine wants them). */
  readonly objects: readonly KubeObject[];
  /** RunSettings' values, checked by the rules of every source (settings.ts). */
  readonly settings: CheckedSettings;
  readonly settingsSource?: Source | undefined;
  /** UpdatePolicies (policy-check.ts): which variants each governs, and how. */
  readonly policies: readonly UpdatePolicy[];
  /** The control files' contents by display path (`.kdelta/web.yaml`): the lines of later problems. */
  readonly texts?: ReadonlyMap<string, string> | undefined;
}

const PORCH_GROUPS = ['config.porch.kpt.dev', 'porch.kpt.dev'];
/** Objects of Porch's groups that a run reads as plain objects (the upstream's PackageRevision for CEL). */
const PORCH_PLAIN_KINDS = new Set(['porch.kpt.dev/v1alpha1 PackageRevision']);

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** Files of the config directory that hold control resources (`proposals/` holds the local forge's records). */
async function controlFiles(dir: string): Promise<string[]> {
  const files = await listFiles(dir, (name) => /\.ya?ml$/.test(name));
  return files.filter((f) => !f.startsWith('proposals/'));
}

/**
 * Read and check every control resource under `dir`. All problems are collected and thrown
 * together as one ControlError, so a user fixes them in one go; nothing is returned half-checked.
 */
export async function loadControl(options: { dir: string; display?: string }): Promise<ControlConfig> {
  const display = options.display ?? options.dir;
  if (!(await isDirectory(options.dir))) {
    throw new ControlError([
      { source: { file: display, document: 0 }, message: 'no such directory (the control resources live there; see --config)' },
    ]);
  }
  const issues: ControlIssue[] = [];
  const repositories: RepositorySpec[] = [];
  const variants: Sourced<PackageVariant>[] = [];
  const sets: Sourced<PackageVariantSet>[] = [];
  const objects: KubeObject[] = [];
  const policies: UpdatePolicy[] = [];
  let settings: CheckedSettings = NO_SETTINGS;
  let settingsSource: Source | undefined;
  const seen = new Map<string, Source>();
  const texts = new Map<string, string>();

  for (const rel of await controlFiles(options.dir)) {
    const file = join(display, rel);
    const text = await readFile(join(options.dir, rel), 'utf8');
    texts.set(file, text);
    const docs = parseYamlStream(text);
    for (const [i, doc] of docs.entries()) {
      const base: Source = { file, document: i + 1 };
      const err = doc.errors[0];
      if (err) {
        issues.push({ source: base, message: `invalid YAML at line ${lineOf(text, err.pos[0])}: ${err.message.split('\n')[0]}` });
        continue;
      }
      let value: unknown;
      try {
        value = yamlDocumentValue(doc, file, i + 1);
      } catch (error) {
        if (!(error instanceof MergeInputError)) throw error;
        issues.push({ source: base, message: error.reason });
        continue;
      }
      if (value === null || value === undefined) continue;
      if (typeof value !== 'object' || Array.isArray(value)) {
        issues.push({ source: base, message: 'expected a KRM object (a map with apiVersion, kind and metadata)' });
        continue;
      }
      const raw = value as Record<string, unknown>;
      const apiVersion = typeof raw.apiVersion === 'string' ? raw.apiVersion : '';
      const kind = typeof raw.kind === 'string' ? raw.kind : '';
      const meta = (raw.metadata ?? {}) as Record<string, unknown>;
      const name = typeof meta.name === 'string' ? meta.name : '';
      const source: Source = { ...base, kind: kind || undefined, name: name || undefined };
      if (!apiVersion) issues.push({ source, field: 'apiVersion', message: 'missing' });
      if (!kind) issues.push({ source, field: 'kind', message: 'missing' });
      if (!name) issues.push({ source, field: 'metadata.name', message: 'missing' });
      if (!apiVersion || !kind || !name) continue;
      const namespace = typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : 'default';
      const key = `${groupOf(apiVersion)} ${kind} ${namespace}/${name}`;
      const before = seen.get(key);
      if (before) {
        issues.push({ source, message: `the same object as ${describeSource(before)} (${kind} ${namespace}/${name}): keep one` });
        continue;
      }
      seen.set(key, source);
      const typeKey = `${apiVersion} ${kind}`;

      if (typeKey === `${REPOSITORY_API_VERSION} Repository`) {
        const repo = checkRepository(raw, source, issues);
        if (repo) {
          repositories.push(repo);
          objects.push(repo.object);
        }
      } else if (typeKey === `${PACKAGE_VARIANT_API_VERSION} PackageVariant`) {
        const d = checkPackageVariant(raw);
        for (const p of d.problems) issues.push(fieldIssue(source, p));
        if (d.problems.length === 0) variants.push({ value: d.value, source });
      } else if (typeKey === `${PACKAGE_VARIANT_SET_API_VERSION} PackageVariantSet`) {
        // kdelta's one departure from Porch here: a set without a revision follows releases, as a
        // PackageVariant without one does (plan.ts resolves the latest release).
        const d = checkPackageVariantSet(raw, { followsReleases: true });
        for (const p of d.problems) issues.push(fieldIssue(source, p));
        if (d.problems.length === 0) sets.push({ value: d.value, source });
      } else if (typeKey === `${RUN_SETTINGS_API_VERSION} ${RUN_SETTINGS_KIND}`) {
        if (settingsSource) {
          issues.push({ source, message: `a second RunSettings (the first is ${describeSource(settingsSource)}): keep one` });
        } else {
          settings = checkRunSettings(raw, source, issues);
          settingsSource = source;
        }
      } else if (typeKey === `${POLICY_API_VERSION} ${UPDATE_POLICY_KIND}`) {
        // one with problems too, so that what it names is checked in the same pass (the load throws then)
        const policy = checkUpdatePolicy(raw, source, issues);
        if (policy) policies.push(policy);
      } else if (typeKey === `${POLICY_API_VERSION} ${DOWNSTREAM_POLICY_KIND}`) {
        // a team's narrowing is read from its own repository; here it would narrow nothing, silently
        issues.push({
          source,
          field: 'kind',
          message: `${DOWNSTREAM_POLICY_KIND} belongs in a downstream repository at ${DOWNSTREAM_POLICY_FILE} (the control repository holds ${UPDATE_POLICY_KIND})`,
        });
      } else if (PORCH_GROUPS.includes(groupOf(apiVersion)) && !PORCH_PLAIN_KINDS.has(typeKey)) {
        issues.push({ source, field: 'kind', message: unknownPorchKind(apiVersion, kind) });
      } else if (groupOf(apiVersion) === 'kdelta.dev') {
        issues.push({ source, field: 'kind', message: unknownKdeltaKind(apiVersion, kind) });
      } else {
        const nearMiss = nearMissOfControlKind(apiVersion, kind);
        if (nearMiss) {
          issues.push({ source, field: nearMiss.field, message: nearMiss.message });
          continue;
        }
        const d = decodeObject(raw);
        for (const p of d.errors) issues.push(fieldIssue(source, p));
        if (d.errors.length === 0) objects.push(d.value);
      }
    }
  }
  checkPolicyReferences(policies, { repositories, sets }, issues);
  if (issues.length > 0) throw new ControlError(issues, texts);
  return { dir: options.dir, repositories, variants, sets, objects, settings, settingsSource, policies, texts };
}

/** The kinds a run reads, each in the one apiVersion it reads it in. */
const CONTROL_KINDS: Readonly<Record<string, string>> = {
  Repository: REPOSITORY_API_VERSION,
  PackageVariant: PACKAGE_VARIANT_API_VERSION,
  PackageVariantSet: PACKAGE_VARIANT_SET_API_VERSION,
  [RUN_SETTINGS_KIND]: RUN_SETTINGS_API_VERSION,
  [UPDATE_POLICY_KIND]: POLICY_API_VERSION,
};

/** Levenshtein distance, small strings only (group and kind names). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * An object outside the groups a run reads that looks like a control resource with a typo
 * (`config.porch.kpt.io/v1alpha1 Repository`, `PackageVarient`): read as a plain object it would
 * vanish, and every variant naming it would fail with "does not exist", far from the typo.
 */
function nearMissOfControlKind(apiVersion: string, kind: string): { field: string; message: string } | undefined {
  const group = groupOf(apiVersion);
  const controlGroups = [...PORCH_GROUPS, groupOf(RUN_SETTINGS_API_VERSION)];
  const nearGroup = controlGroups.find((g) => editDistance(group.toLowerCase(), g) <= 3);
  const nearKind = Object.keys(CONTROL_KINDS).find(
    (k) => k.toLowerCase() === kind.toLowerCase() || (kind.length > 5 && editDistance(kind, k) <= 2),
  );
  if (nearGroup && nearKind) {
    return {
      field: 'apiVersion',
      message: `unknown group "${group}" for ${kind}: did you mean ${CONTROL_KINDS[nearKind]} (kind ${nearKind})? A run reads it only there`,
    };
  }
  if (nearGroup) {
    return {
      field: 'apiVersion',
      message: `unknown group "${group}": did you mean ${nearGroup}? (a run reads ${Object.entries(CONTROL_KINDS)
        .map(([k, v]) => `${k} in ${v}`)
        .join(', ')})`,
    };
  }
  return undefined;
}

/** A kdelta.dev object a run does not read: the wrong version of a known kind, or a kind near one. */
function unknownKdeltaKind(apiVersion: string, kind: string): string {
  const known = [RUN_SETTINGS_KIND, UPDATE_POLICY_KIND];
  if (known.includes(kind)) return `${kind} is read as ${CONTROL_KINDS[kind]}, not ${apiVersion}`;
  const near = known.find((k) => k.toLowerCase() === kind.toLowerCase() || editDistance(kind, k) <= 2);
  return `unknown kind "${kind}" in ${apiVersion}${near ? `: did you mean ${near}?` : ''} (a run reads ${known.join(' and ')} in ${RUN_SETTINGS_API_VERSION})`;
}

function unknownPorchKind(apiVersion: string, kind: string): string {
  const known: Record<string, string> = {
    Repository: REPOSITORY_API_VERSION,
    PackageVariant: PACKAGE_VARIANT_API_VERSION,
    PackageVariantSet: PACKAGE_VARIANT_SET_API_VERSION,
  };
  const want = known[kind];
  if (want) return `${kind} is read as ${want}, not ${apiVersion}`;
  const near = Object.keys(known).find((k) => k.toLowerCase() === kind.toLowerCase() || editDistance(kind, k) <= 2);
  return `unknown kind "${kind}" in ${apiVersion}${near ? `: did you mean ${near} (${known[near]})?` : ''} (a run reads Repository and PackageVariant in ${PACKAGE_VARIANT_API_VERSION}, PackageVariantSet in ${PACKAGE_VARIANT_SET_API_VERSION})`;
}

/** `spec.x: reason` from the decoders and validators → an issue with the field split out. */
function fieldIssue(source: Source, problem: string): ControlIssue {
  const m = /^((?:spec|metadata|status)[\w.[\]"=-]*): (.*)$/s.exec(problem);
  if (m) return { source, field: m[1], message: m[2]! };
  const bare = /^(?:missing required field |either )?((?:spec|metadata)\.[\w.[\]]+)/.exec(problem);
  return { source, field: bare?.[1], message: problem };
}

const REPOSITORY_FIELDS: Record<string, readonly string[]> = {
  '': ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
  spec: ['description', 'type', 'content', 'deployment', 'git', 'oci', 'upstream', 'mutators', 'validators'],
  'spec.git': ['repo', 'branch', 'createBranch', 'directory', 'secretRef', 'author', 'email'],
};

function checkRepository(raw: Record<string, unknown>, source: Source, issues: ControlIssue[]): RepositorySpec | undefined {
  const before = issues.length;
  const d = decodeObject(raw);
  for (const p of d.errors) issues.push(fieldIssue(source, p));
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const spec = raw.spec;
  if (!isMap(spec)) {
    issues.push({ source, field: 'spec', message: spec === undefined ? 'missing' : 'expected a map' });
    return undefined;
  }
  for (const [path, fields] of Object.entries(REPOSITORY_FIELDS)) {
    const at = path === '' ? raw : path === 'spec' ? spec : spec.git;
    if (!isMap(at)) continue;
    for (const k of Object.keys(at)) {
      if (!fields.includes(k))
        issues.push({ source, field: path ? `${path}.${k}` : k, message: `unknown field (expected one of ${fields.join(', ')})` });
    }
  }
  if (spec.type !== undefined && spec.type !== 'git') {
    issues.push({ source, field: 'spec.type', message: `a run reads git repositories only (got ${JSON.stringify(spec.type)})` });
  }
  const git = spec.git;
  if (!isMap(git)) {
    issues.push({ source, field: 'spec.git', message: git === undefined ? 'missing (a run needs spec.git.repo)' : 'expected a map' });
    return undefined;
  }
  const str = (field: string, required: boolean): string | undefined => {
    const v = git[field];
    if (v === undefined || v === null) {
      if (required) issues.push({ source, field: `spec.git.${field}`, message: 'missing' });
      return undefined;
    }
    if (typeof v !== 'string' || (required && v === '')) {
      issues.push({
        source,
        field: `spec.git.${field}`,
        message: `expected a${required ? ' non-empty' : ''} string, got ${JSON.stringify(v)}`,
      });
      return undefined;
    }
    return v;
  };
  const repo = str('repo', true);
  const branch = str('branch', false);
  const directory = str('directory', false);
  if (directory?.split('/').includes('..')) issues.push({ source, field: 'spec.git.directory', message: 'may not contain ".."' });
  if (branch !== undefined && !/^[A-Za-z0-9._/+-]+$/.test(branch)) {
    issues.push({ source, field: 'spec.git.branch', message: `"${branch}" is not a valid branch name` });
  }
  if (issues.length > before || repo === undefined) return undefined;
  return {
    name: source.name ?? '',
    namespace: d.value.metadata?.namespace || 'default',
    repo,
    branch: branch || 'main',
    directory: (directory ?? '').replace(/^\/+|\/+$/g, ''),
    labels: d.value.metadata?.labels ?? {},
    object: d.value,
    source,
  };
}

/**
 * RunSettings: its shape here (the top-level fields), its `spec` through settings.ts's one
 * parse and one set of rules, shared with the flags and the Action's inputs.
 */
function checkRunSettings(raw: Record<string, unknown>, source: Source, issues: ControlIssue[]): CheckedSettings {
  for (const k of Object.keys(raw)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec'].includes(k))
      issues.push({ source, field: k, message: 'unknown field (expected one of apiVersion, kind, metadata, spec)' });
  }
  const parsed = runSettingsSource(raw.spec, source.file);
  for (const p of parsed.problems) issues.push({ source, field: p.field, message: p.message });
  const { settings, problems } = checkSettings(parsed.raw);
  for (const p of problems) issues.push({ source, field: p.origin.type === 'field' ? p.origin.field : undefined, message: p.message });
  return settings;
}
