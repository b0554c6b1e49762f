import type { ControlIssue, RepositorySpec, Source, Sourced } from '../control/control-source.js';
import type { PackageVariantSet } from '@kdelta/variant-engine';
import { parseDuration, quote } from './duration.js';
import { isTimeZone, parseWindow } from './window.js';
import {
  DEFAULT_WAVES,
  UPDATE_TYPES,
  WAVE_LABEL,
  type Freeze,
  type HealthSignal,
  type PolicySelector,
  type RolloutSpec,
  type Schedule,
  type ScheduleWindow,
  type UpdatePolicy,
  type UpdateType,
} from './policy.js';

/**
 * UpdatePolicy (kdelta.dev/v1alpha1), read into the contract type: parse → defaults → rules, every
 * problem collected with its field (`spec.schedule.windows[1]`) and reason. The readers of single
 * fields below are shared with the cluster team's file (downstream-policy.ts), so a window, a
 * duration or an update type means one thing wherever it is written.
 */

/** A problem with one field of a policy document. */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

export type Problems = FieldProblem[];

export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function join(field: string, key: string | number): string {
  return typeof key === 'number' ? `${field}[${key}]` : field ? `${field}.${key}` : key;
}

/** Every key of `map` not in `allowed` is a problem: an unknown field is a typo or a rule this version does not know. */
export function unknownFields(map: Record<string, unknown>, field: string, allowed: readonly string[], problems: Problems): void {
  for (const k of Object.keys(map)) {
    if (!allowed.includes(k)) problems.push({ field: join(field, k), message: `unknown field (expected one of ${allowed.join(', ')})` });
  }
}

/** A map, or a problem; absent (undefined/null) is undefined without one. */
export function readMap(value: unknown, field: string, problems: Problems): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (isMap(value)) return value;
  problems.push({ field, message: `expected a map, got ${quote(value)}` });
  return undefined;
}

export function readString(value: unknown, field: string, problems: Problems, required = false): string | undefined {
  if (value === undefined || value === null) {
    if (required) problems.push({ field, message: 'missing' });
    return undefined;
  }
  if (typeof value !== 'string' || value === '') {
    problems.push({ field, message: `expected a non-empty string, got ${quote(value)}` });
    return undefined;
  }
  return value;
}

export function readBoolean(value: unknown, field: string, problems: Problems): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  problems.push({ field, message: `expected true or false, got ${quote(value)}` });
  return undefined;
}

/** A list of non-empty strings, each once; `nonEmpty`: at least one. */
export function readStringList(
  value: unknown,
  field: string,
  problems: Problems,
  options: { nonEmpty?: boolean; what?: string } = {},
): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    problems.push({ field, message: `expected a list of ${options.what ?? 'strings'}, got ${quote(value)}` });
    return undefined;
  }
  if (options.nonEmpty && value.length === 0) {
    problems.push({ field, message: `empty: list at least one ${options.what ?? 'value'} (or leave the field out)` });
    return undefined;
  }
  const out: string[] = [];
  const before = problems.length;
  for (const [i, v] of value.entries()) {
    if (typeof v !== 'string' || v === '')
      problems.push({ field: join(field, i), message: `expected a non-empty string, got ${quote(v)}` });
    else if (out.includes(v)) problems.push({ field: join(field, i), message: `${quote(v)} is listed twice` });
    else out.push(v);
  }
  return problems.length > before ? undefined : out;
}

/** `[patch, minor]` → the set; at least one, each of patch, minor, major. */
export function readUpdateTypes(value: unknown, field: string, problems: Problems): Set<UpdateType> | undefined {
  const list = readStringList(value, field, problems, { nonEmpty: true, what: 'update types (patch, minor, major)' });
  if (!list) return undefined;
  const before = problems.length;
  for (const [i, t] of list.entries()) {
    if (!(UPDATE_TYPES as readonly string[]).includes(t))
      problems.push({ field: join(field, i), message: `unknown update type ${quote(t)} (expected patch, minor or major)` });
  }
  return problems.length > before ? undefined : new Set(list as UpdateType[]);
}

export function readDuration(value: unknown, field: string, problems: Problems): number | undefined {
  if (value === undefined || value === null) return undefined;
  const d = parseDuration(value);
  if (!d.ok) {
    problems.push({ field, message: d.reason });
    return undefined;
  }
  return d.ms;
}

export function readPositiveInteger(value: unknown, field: string, problems: Problems): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    problems.push({ field, message: `expected a positive whole number, got ${quote(value)}` });
    return undefined;
  }
  return value;
}

/** `2026-12-20` (00:00 UTC) or an RFC 3339 date-time with its offset (`2027-01-04T00:00:00Z`). */
export function readInstant(value: unknown, field: string, problems: Problems, required = false): Date | undefined {
  if (value === undefined || value === null) {
    if (required) problems.push({ field, message: 'missing' });
    return undefined;
  }
  const bad = () => {
    problems.push({
      field,
      message: `expected a date (2026-12-20, 00:00 UTC) or an RFC 3339 date-time (2026-12-20T18:00:00Z), got ${quote(value)}`,
    });
    return undefined;
  };
  if (typeof value !== 'string') return bad();
  const m = /^(\d{4}-\d{2}-\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))?$/.exec(value);
  if (!m) return bad();
  const date = new Date(m[2] === undefined ? `${m[1]}T00:00:00Z` : value);
  // `2026-02-30` parses in some engines and not in others: the day must be a day of the calendar
  if (Number.isNaN(date.getTime()) || new Date(`${m[1]}T00:00:00Z`).toISOString().slice(0, 10) !== m[1]) return bad();
  if (m[2] !== undefined && (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4]) > 59)) return bad();
  return date;
}

/** `{timeZone, windows}`: the zone known to Intl (default UTC), at least one window. */
export function readSchedule(value: unknown, field: string, problems: Problems): Schedule | undefined {
  const map = readMap(value, field, problems);
  if (!map) return undefined;
  const before = problems.length;
  unknownFields(map, field, ['timeZone', 'windows'], problems);
  const timeZone = readString(map.timeZone, join(field, 'timeZone'), problems) ?? 'UTC';
  if (map.timeZone !== undefined && problems.length === before && !isTimeZone(timeZone)) {
    problems.push({
      field: join(field, 'timeZone'),
      message: `unknown time zone ${quote(timeZone)} (expected an IANA name like Europe/Berlin or UTC)`,
    });
  }
  const windows: ScheduleWindow[] = [];
  if (map.windows === undefined || map.windows === null) {
    problems.push({ field: join(field, 'windows'), message: 'missing (a schedule lists the windows in which new proposals may be made)' });
  } else if (!Array.isArray(map.windows) || map.windows.length === 0) {
    problems.push({ field: join(field, 'windows'), message: `expected a non-empty list of windows, got ${quote(map.windows)}` });
  } else {
    for (const [i, w] of map.windows.entries()) {
      const parsed = parseWindow(w);
      if (parsed.ok) windows.push(parsed.window);
      else problems.push({ field: join(join(field, 'windows'), i), message: parsed.reason });
    }
  }
  return problems.length > before ? undefined : { timeZone, windows };
}

const LABEL_KEY = /^(?:[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

export function isLabelValue(v: string): boolean {
  return LABEL_VALUE.test(v);
}

const SPEC_FIELDS = [
  'selector',
  'updateTypes',
  'ignore',
  'minimumReleaseAge',
  'separateMajor',
  'schedule',
  'freezes',
  'limits',
  'group',
  'autoMerge',
  'rollout',
];

/**
 * One UpdatePolicy document → the contract type, its problems pushed to `issues`. With problems,
 * the policy as far as it reads (undefined when its spec is no map): enough to check what it names
 * (checkPolicyReferences) in the same pass, never to run with.
 */
export function checkUpdatePolicy(raw: Record<string, unknown>, source: Source, issues: ControlIssue[]): UpdatePolicy | undefined {
  const problems: Problems = [];
  const policy = readUpdatePolicy(raw, source, problems);
  for (const p of problems) issues.push({ source, field: p.field, message: p.message });
  return policy;
}

function readUpdatePolicy(raw: Record<string, unknown>, source: Source, problems: Problems): UpdatePolicy | undefined {
  unknownFields(raw, '', ['apiVersion', 'kind', 'metadata', 'spec'], problems);
  const spec = raw.spec === undefined || raw.spec === null ? {} : readMap(raw.spec, 'spec', problems);
  if (!spec) return undefined;
  unknownFields(spec, 'spec', SPEC_FIELDS, problems);
  const selector = readSelector(spec.selector, problems);
  const updateTypes = readUpdateTypes(spec.updateTypes, 'spec.updateTypes', problems) ?? new Set(UPDATE_TYPES);
  const ignore = readStringList(spec.ignore, 'spec.ignore', problems, { what: 'tags or versions' }) ?? [];
  const minimumReleaseAgeMs = readDuration(spec.minimumReleaseAge, 'spec.minimumReleaseAge', problems) ?? 0;
  const separateMajor = readBoolean(spec.separateMajor, 'spec.separateMajor', problems) ?? true;
  const schedule = readSchedule(spec.schedule, 'spec.schedule', problems);
  const freezes = readFreezes(spec.freezes, problems);
  const limits = readLimits(spec.limits, problems);
  let group: 'none' | 'repository' = 'none';
  if (spec.group !== undefined && spec.group !== null) {
    if (spec.group === 'none' || spec.group === 'repository') group = spec.group;
    else problems.push({ field: 'spec.group', message: `expected none or repository, got ${quote(spec.group)}` });
  }
  const autoMerge = readAutoMerge(spec.autoMerge, problems);
  for (const [i, t] of [...(autoMerge?.updateTypes ?? [])].entries()) {
    // merging what is never proposed is a slip in one of the two lists, not a rule
    if (!updateTypes.has(t)) {
      problems.push({
        field: `spec.autoMerge.updateTypes[${i}]`,
        message: `"${t}" is never proposed (spec.updateTypes: ${UPDATE_TYPES.filter((u) => updateTypes.has(u)).join(', ')})`,
      });
    }
  }
  const rollout = readRollout(spec.rollout, problems);
  return {
    name: source.name ?? '',
    source,
    selector,
    updateTypes,
    ignore,
    minimumReleaseAgeMs,
    separateMajor,
    schedule,
    freezes,
    limits,
    group,
    autoMerge,
    rollout,
  };
}

function readSelector(value: unknown, problems: Problems): PolicySelector {
  const map = readMap(value, 'spec.selector', problems);
  if (!map) return {};
  unknownFields(map, 'spec.selector', ['packageVariantSets', 'packageVariants', 'upstream', 'downstreamLabels'], problems);
  const packageVariantSets = readStringList(map.packageVariantSets, 'spec.selector.packageVariantSets', problems, {
    nonEmpty: true,
    what: 'PackageVariantSet names',
  });
  const packageVariants = readStringList(map.packageVariants, 'spec.selector.packageVariants', problems, {
    nonEmpty: true,
    what: 'variant names or globs',
  });
  let upstream: PolicySelector['upstream'];
  const up = readMap(map.upstream, 'spec.selector.upstream', problems);
  if (up) {
    unknownFields(up, 'spec.selector.upstream', ['repo', 'package'], problems);
    const repo = readString(up.repo, 'spec.selector.upstream.repo', problems, true);
    const pkg = readString(up.package, 'spec.selector.upstream.package', problems);
    if (repo) upstream = { repo, package: pkg };
  }
  let downstreamLabels: Record<string, string> | undefined;
  const labels = readMap(map.downstreamLabels, 'spec.selector.downstreamLabels', problems);
  if (labels) {
    downstreamLabels = {};
    for (const [k, v] of Object.entries(labels)) {
      if (typeof v !== 'string')
        problems.push({ field: `spec.selector.downstreamLabels.${k}`, message: `expected a string (quote it), got ${quote(v)}` });
      else downstreamLabels[k] = v;
    }
  }
  return { packageVariantSets, packageVariants, upstream, downstreamLabels };
}

function readFreezes(value: unknown, problems: Problems): Freeze[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push({ field: 'spec.freezes', message: `expected a list of {from, until, reason}, got ${quote(value)}` });
    return [];
  }
  const out: Freeze[] = [];
  for (const [i, item] of value.entries()) {
    const field = `spec.freezes[${i}]`;
    const map = readMap(item, field, problems);
    if (!map) {
      if (item === null || item === undefined) problems.push({ field, message: 'expected {from, until, reason}' });
      continue;
    }
    const before = problems.length;
    unknownFields(map, field, ['from', 'until', 'reason'], problems);
    const from = readInstant(map.from, `${field}.from`, problems, true);
    const until = readInstant(map.until, `${field}.until`, problems, true);
    const reason = readString(map.reason, `${field}.reason`, problems);
    if (from && until && until.getTime() <= from.getTime()) {
      problems.push({ field: `${field}.until`, message: `must be after from (${quote(map.from)}): until is exclusive` });
    }
    if (problems.length === before && from && until) out.push({ from, until, reason });
  }
  return out;
}

function readLimits(value: unknown, problems: Problems): UpdatePolicy['limits'] {
  const map = readMap(value, 'spec.limits', problems);
  if (!map) return {};
  unknownFields(map, 'spec.limits', ['openProposals', 'perHour'], problems);
  return {
    openProposals: readPositiveInteger(map.openProposals, 'spec.limits.openProposals', problems),
    perHour: readPositiveInteger(map.perHour, 'spec.limits.perHour', problems),
  };
}

function readAutoMerge(value: unknown, problems: Problems): UpdatePolicy['autoMerge'] {
  const map = readMap(value, 'spec.autoMerge', problems);
  if (!map) return undefined;
  unknownFields(map, 'spec.autoMerge', ['updateTypes', 'upstreams'], problems);
  if (map.updateTypes === undefined || map.updateTypes === null) {
    // no default here: merging without a person is said in so many words
    problems.push({ field: 'spec.autoMerge.updateTypes', message: 'missing (the update types merged without a person, e.g. [patch])' });
    return undefined;
  }
  const updateTypes = readUpdateTypes(map.updateTypes, 'spec.autoMerge.updateTypes', problems);
  const upstreams = readStringList(map.upstreams, 'spec.autoMerge.upstreams', problems, { nonEmpty: true, what: 'Repository names' });
  return updateTypes ? { updateTypes, upstreams } : undefined;
}

function readRollout(value: unknown, problems: Problems): RolloutSpec | undefined {
  const map = readMap(value, 'spec.rollout', problems);
  if (!map) return undefined;
  unknownFields(map, 'spec.rollout', ['label', 'waves', 'soak', 'health', 'halted', 'advanced'], problems);
  const label = readString(map.label, 'spec.rollout.label', problems) ?? WAVE_LABEL;
  if (!LABEL_KEY.test(label))
    problems.push({ field: 'spec.rollout.label', message: `${quote(label)} is not a label key (like kdelta.dev/wave)` });
  const waves = readStringList(map.waves, 'spec.rollout.waves', problems, { nonEmpty: true, what: 'wave names' }) ?? [...DEFAULT_WAVES];
  for (const [i, w] of waves.entries()) {
    if (!isLabelValue(w))
      problems.push({
        field: `spec.rollout.waves[${i}]`,
        message: `${quote(w)} is not a label value (a Repository's label names its wave)`,
      });
  }
  const soakMs = readDuration(map.soak, 'spec.rollout.soak', problems) ?? 0;
  let health: HealthSignal | undefined;
  const h = readMap(map.health, 'spec.rollout.health', problems);
  if (h) {
    unknownFields(h, 'spec.rollout.health', ['name', 'kind'], problems);
    const name = readString(h.name, 'spec.rollout.health.name', problems, true);
    let kind: HealthSignal['kind'] = 'any';
    if (h.kind !== undefined && h.kind !== null) {
      if (h.kind === 'status' || h.kind === 'check-run' || h.kind === 'any') kind = h.kind;
      else problems.push({ field: 'spec.rollout.health.kind', message: `expected status, check-run or any, got ${quote(h.kind)}` });
    }
    if (name) health = { name, kind };
  }
  const halted: { revision: string; reason: string }[] = [];
  for (const [i, item] of listOf(map.halted, 'spec.rollout.halted', '{revision, reason}', problems).entries()) {
    const field = `spec.rollout.halted[${i}]`;
    const m = readMap(item, field, problems);
    if (!m) continue;
    unknownFields(m, field, ['revision', 'reason'], problems);
    const revision = readString(m.revision, `${field}.revision`, problems, true);
    const reason = readString(m.reason, `${field}.reason`, problems, true);
    if (revision && reason) halted.push({ revision, reason });
  }
  const advanced: { revision: string; wave: string }[] = [];
  for (const [i, item] of listOf(map.advanced, 'spec.rollout.advanced', '{revision, wave}', problems).entries()) {
    const field = `spec.rollout.advanced[${i}]`;
    const m = readMap(item, field, problems);
    if (!m) continue;
    unknownFields(m, field, ['revision', 'wave'], problems);
    const revision = readString(m.revision, `${field}.revision`, problems, true);
    const wave = readString(m.wave, `${field}.wave`, problems, true);
    if (wave && !waves.includes(wave)) {
      problems.push({ field: `${field}.wave`, message: `unknown wave ${quote(wave)} (the waves are ${waves.join(', ')})` });
    } else if (revision && wave) advanced.push({ revision, wave });
  }
  return { label, waves, soakMs, health, halted, advanced };
}

function listOf(value: unknown, field: string, what: string, problems: Problems): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  problems.push({ field, message: `expected a list of ${what}, got ${quote(value)}` });
  return [];
}

/**
 * What a policy names must exist: the PackageVariantSets and upstream Repository of its selector,
 * the upstreams of its autoMerge. Checked once every control document is read.
 */
export function checkPolicyReferences(
  policies: readonly UpdatePolicy[],
  config: { readonly repositories: readonly RepositorySpec[]; readonly sets: readonly Sourced<PackageVariantSet>[] },
  issues: ControlIssue[],
): void {
  const repositories = new Set(config.repositories.map((r) => r.name));
  const sets = new Set(config.sets.map((s) => s.value.metadata?.name ?? s.source.name ?? ''));
  const repoList = () => [...repositories].sort().join(', ') || 'none';
  for (const policy of policies) {
    const { source, selector } = policy;
    for (const [i, name] of (selector.packageVariantSets ?? []).entries()) {
      if (!sets.has(name)) {
        issues.push({
          source,
          field: `spec.selector.packageVariantSets[${i}]`,
          message: `PackageVariantSet ${quote(name)} does not exist (the sets are ${[...sets].sort().join(', ') || 'none'})`,
        });
      }
    }
    if (selector.upstream && !repositories.has(selector.upstream.repo)) {
      issues.push({
        source,
        field: 'spec.selector.upstream.repo',
        message: `Repository ${quote(selector.upstream.repo)} does not exist (the Repositories are ${repoList()})`,
      });
    }
    for (const [i, name] of (policy.autoMerge?.upstreams ?? []).entries()) {
      if (!repositories.has(name)) {
        issues.push({
          source,
          field: `spec.autoMerge.upstreams[${i}]`,
          message: `Repository ${quote(name)} does not exist (the Repositories are ${repoList()})`,
        });
      }
    }
  }
}
