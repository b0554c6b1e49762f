import { MergeInputError, parseYamlStream, yamlDocumentValue, yamlErrorReason } from '@kdelta/merge-core';
import { formatDuration, quote } from './duration.js';
import {
  isMap,
  readBoolean,
  readDuration,
  readInstant,
  readMap,
  readSchedule,
  readString,
  readStringList,
  readUpdateTypes,
  unknownFields,
  type Problems,
} from './policy-check.js';
import { DOWNSTREAM_POLICY_KIND, POLICY_API_VERSION, UPDATE_TYPES, type DownstreamPolicy, type UpdatePolicy } from './policy.js';

/**
 * A cluster team's `.kdelta/downstream-policy.yaml`, read from its own repository: untrusted
 * input that may only narrow what the fleet's UpdatePolicy lets reach it (pause, ignore, fewer
 * update types, its own window, a later wave, a longer minimum age). Pure: the text in, the
 * narrowing or its errors out; a bad file never throws (its variants fail with
 * `downstream-policy-invalid` and these messages, and the rest of the run goes on).
 */

/** A team's file larger than this is refused unread: it only ever needs a few lines. */
export const DOWNSTREAM_POLICY_MAX_BYTES = 64 * 1024;
/** At most this many errors are said (then how many more): the file is a stranger's. */
const MAX_ERRORS = 20;
/** A message never echoes more than this much of the file. */
const MAX_MESSAGE = 300;

const SPEC_FIELDS = ['packages', 'pause', 'ignore', 'updateTypes', 'schedule', 'wave', 'minimumReleaseAge'];
/** The fleet's fields a team may not set: each would widen or override the fleet's policy. */
const FLEET_ONLY = ['selector', 'separateMajor', 'freezes', 'limits', 'group', 'autoMerge', 'rollout'];

export type DownstreamPolicyResult =
  | { readonly ok: true; readonly value: DownstreamPolicy }
  | { readonly ok: false; readonly errors: string[] };

export function parseDownstreamPolicy(
  text: string,
  options: { readonly file: string; readonly fleet: UpdatePolicy },
): DownstreamPolicyResult {
  const { file, fleet } = options;
  const fail = (problems: Problems): DownstreamPolicyResult => ({ ok: false, errors: say(file, problems) });
  const size = Buffer.byteLength(text, 'utf8');
  if (size > DOWNSTREAM_POLICY_MAX_BYTES) {
    return fail([
      { field: '', message: `refused: ${size} bytes, more than ${DOWNSTREAM_POLICY_MAX_BYTES} (a team's policy is a few lines)` },
    ]);
  }
  const docs = parseYamlStream(text);
  if (docs.length !== 1) {
    return fail([{ field: '', message: `expected one YAML document (a ${DOWNSTREAM_POLICY_KIND}), found ${docs.length}` }]);
  }
  const doc = docs[0]!;
  const yamlError = yamlErrorReason(doc, text);
  if (yamlError !== undefined) return fail([{ field: '', message: yamlError }]);
  let raw: unknown;
  try {
    raw = yamlDocumentValue(doc, file);
  } catch (error) {
    if (!(error instanceof MergeInputError)) throw error;
    return fail([{ field: '', message: error.reason }]);
  }
  if (!isMap(raw))
    return fail([{ field: '', message: `expected a ${DOWNSTREAM_POLICY_KIND} (a map with apiVersion, kind, metadata and spec)` }]);
  const problems: Problems = [];
  const value = readDownstreamPolicy(raw, file, fleet, problems);
  return problems.length > 0 || !value ? fail(problems) : { ok: true, value };
}

function readDownstreamPolicy(
  raw: Record<string, unknown>,
  file: string,
  fleet: UpdatePolicy,
  problems: Problems,
): DownstreamPolicy | undefined {
  unknownFields(raw, '', ['apiVersion', 'kind', 'metadata', 'spec'], problems);
  if (raw.apiVersion !== POLICY_API_VERSION)
    problems.push({ field: 'apiVersion', message: `expected ${POLICY_API_VERSION}, got ${quote(raw.apiVersion)}` });
  if (raw.kind !== DOWNSTREAM_POLICY_KIND)
    problems.push({ field: 'kind', message: `expected ${DOWNSTREAM_POLICY_KIND}, got ${quote(raw.kind)}` });
  const metadata = readMap(raw.metadata, 'metadata', problems);
  if (metadata) unknownFields(metadata, 'metadata', ['name', 'labels', 'annotations'], problems);
  const spec = readMap(raw.spec, 'spec', problems);
  if (!spec) {
    if (raw.spec === undefined || raw.spec === null) problems.push({ field: 'spec', message: 'missing' });
    return undefined;
  }
  for (const k of Object.keys(spec)) {
    if (FLEET_ONLY.includes(k)) {
      problems.push({
        field: `spec.${k}`,
        message: `the fleet's UpdatePolicy "${fleet.name}" sets it: a team's file may only narrow (${SPEC_FIELDS.join(', ')})`,
      });
    }
  }
  unknownFields(Object.fromEntries(Object.entries(spec).filter(([k]) => !FLEET_ONLY.includes(k))), 'spec', SPEC_FIELDS, problems);

  const packages = readStringList(spec.packages, 'spec.packages', problems, { nonEmpty: true, what: 'package names or globs' });
  const pause = readPause(spec.pause, problems);
  const ignore = readStringList(spec.ignore, 'spec.ignore', problems, { what: 'tags or versions' }) ?? [];

  const updateTypes = readUpdateTypes(spec.updateTypes, 'spec.updateTypes', problems);
  if (updateTypes) {
    const allowed = UPDATE_TYPES.filter((t) => fleet.updateTypes.has(t));
    for (const [i, t] of [...updateTypes].entries()) {
      if (!fleet.updateTypes.has(t)) {
        problems.push({
          field: `spec.updateTypes[${i}]`,
          message: `"${t}" widens the fleet's UpdatePolicy "${fleet.name}", which allows ${allowed.join(', ')}: a team's file may only narrow`,
        });
      }
    }
  }

  const schedule = readSchedule(spec.schedule, 'spec.schedule', problems);

  let wave: string | undefined;
  if (spec.wave !== undefined && spec.wave !== null) {
    const w = readString(spec.wave, 'spec.wave', problems);
    const waves = fleet.rollout?.waves;
    if (w !== undefined && !waves) {
      problems.push({ field: 'spec.wave', message: `the fleet's UpdatePolicy "${fleet.name}" has no rollout waves` });
    } else if (w !== undefined && waves && !waves.includes(w)) {
      problems.push({
        field: 'spec.wave',
        message: `${quote(w)} is not a wave of the fleet's UpdatePolicy "${fleet.name}" (its waves: ${waves.join(', ')})`,
      });
    } else wave = w;
  }

  const minimumReleaseAgeMs = readDuration(spec.minimumReleaseAge, 'spec.minimumReleaseAge', problems);
  if (minimumReleaseAgeMs !== undefined && minimumReleaseAgeMs < fleet.minimumReleaseAgeMs) {
    problems.push({
      field: 'spec.minimumReleaseAge',
      message: `${formatDuration(minimumReleaseAgeMs)} is shorter than the fleet's ${formatDuration(fleet.minimumReleaseAgeMs)} (UpdatePolicy "${fleet.name}"): a team's file may only wait longer`,
    });
  }
  if (problems.length > 0) return undefined;
  return { file, packages, pause, ignore, updateTypes, schedule, wave, minimumReleaseAgeMs };
}

/** `pause: true`, `pause: false`, or `pause: {until, reason}` (no until: until the file says otherwise). */
function readPause(value: unknown, problems: Problems): DownstreamPolicy['pause'] {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return readBoolean(value, 'spec.pause', problems) ? {} : undefined;
  const map = readMap(value, 'spec.pause', problems);
  if (!map) return undefined;
  unknownFields(map, 'spec.pause', ['until', 'reason'], problems);
  const until = readInstant(map.until, 'spec.pause.until', problems);
  const reason = readString(map.reason, 'spec.pause.reason', problems);
  return { until, reason };
}

/**
 * `<file>: <field>: <reason>`, each bounded: a field is named after the file's own keys, so a key
 * of a kilobyte is cut like any other value the file holds.
 */
function say(file: string, problems: Problems): string[] {
  const lines = problems.slice(0, MAX_ERRORS).map((p) => {
    const field = p.field.length > 80 ? `${p.field.slice(0, 80)}…` : p.field;
    const line = printable(`${file}: ${field ? `${field}: ` : ''}${p.message}`);
    return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE)}…` : line;
  });
  if (problems.length > MAX_ERRORS) lines.push(`${file}: and ${problems.length - MAX_ERRORS} more problems`);
  return lines;
}

/** A key or a YAML error may hold control characters (a newline, a terminal escape): shown escaped, never raw. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
