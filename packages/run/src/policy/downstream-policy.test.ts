import { parseYamlStream } from '@kdelta/merge-core';
import { describe, expect, it } from 'vitest';
import type { ControlIssue } from '../control/control.js';
import { DOWNSTREAM_POLICY_MAX_BYTES, parseDownstreamPolicy } from './downstream-policy.js';
import { checkUpdatePolicy } from './policy-check.js';
import type { UpdatePolicy } from './policy.js';

/** The fleet's policy, read as the control stage reads it. */
function fleetPolicy(spec: string): UpdatePolicy {
  const text = `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n${spec.replace(/^/gm, '  ')}\n`;
  const issues: ControlIssue[] = [];
  const policy = checkUpdatePolicy(
    parseYamlStream(text)[0]!.toJS() as Record<string, unknown>,
    { file: '.kdelta/p.yaml', document: 1, kind: 'UpdatePolicy', name: 'platform' },
    issues,
  );
  expect(issues).toEqual([]);
  return policy!;
}

const FLEET = fleetPolicy('updateTypes: [patch, minor]\nminimumReleaseAge: 3d\nrollout: {waves: [canary, early, prod]}');
const FILE = 'cluster-a:.kdelta/downstream-policy.yaml';
const team = (spec: string) =>
  `apiVersion: kdelta.dev/v1alpha1\nkind: DownstreamPolicy\nmetadata: {name: team-payments}\nspec:\n${spec.replace(/^/gm, '  ')}\n`;
const parse = (text: string, fleet = FLEET) => parseDownstreamPolicy(text, { file: FILE, fleet });

describe("parseDownstreamPolicy: a team's narrowing", () => {
  it("reads every field of the design's example", () => {
    const r = parse(
      team(`packages: ["basens*"]
pause: {until: 2026-12-07T00:00:00Z, reason: migration week}
ignore: [v1.5.0]
updateTypes: [patch]
schedule: {timeZone: America/New_York, windows: ["Tue-Thu 10:00-16:00"]}
wave: prod
minimumReleaseAge: 7d`),
    );
    expect(r).toEqual({
      ok: true,
      value: {
        file: FILE,
        packages: ['basens*'],
        pause: { until: new Date('2026-12-07T00:00:00Z'), reason: 'migration week' },
        ignore: ['v1.5.0'],
        updateTypes: new Set(['patch']),
        schedule: {
          timeZone: 'America/New_York',
          windows: [{ kind: 'weekly', days: [2, 3, 4], from: 600, until: 960, text: 'Tue-Thu 10:00-16:00' }],
        },
        wave: 'prod',
        minimumReleaseAgeMs: 7 * 24 * 3600_000,
      },
    });
  });

  it.each([
    ['pause: true', { pause: {} }],
    ['pause: false', { pause: undefined }],
    ['pause: {reason: audit}', { pause: { until: undefined, reason: 'audit' } }],
    ['updateTypes: [patch, minor]', { updateTypes: new Set(['patch', 'minor']) }],
    ['wave: early', { wave: 'early' }],
    ['minimumReleaseAge: 3d', { minimumReleaseAgeMs: 3 * 24 * 3600_000 }],
    ['{}', { packages: undefined, ignore: [], schedule: undefined }],
  ])('narrows: %s', (spec, want) => {
    const r = parse(team(spec));
    expect(r.ok && r.value).toMatchObject(want);
  });

  it.each([
    [
      'an update type the fleet does not allow',
      'updateTypes: [patch, major]',
      'spec.updateTypes[1]: "major" widens the fleet\'s UpdatePolicy "platform", which allows patch, minor: a team\'s file may only narrow',
    ],
    [
      'a shorter minimum age',
      'minimumReleaseAge: 1d',
      'spec.minimumReleaseAge: 1d is shorter than the fleet\'s 3d (UpdatePolicy "platform"): a team\'s file may only wait longer',
    ],
    [
      'a wave the fleet does not have',
      'wave: staging',
      'spec.wave: "staging" is not a wave of the fleet\'s UpdatePolicy "platform" (its waves: canary, early, prod)',
    ],
    [
      'auto-merge',
      'autoMerge: {updateTypes: [major]}',
      'spec.autoMerge: the fleet\'s UpdatePolicy "platform" sets it: a team\'s file may only narrow (packages, pause, ignore, updateTypes, schedule, wave, minimumReleaseAge)',
    ],
    ['limits', 'limits: {openProposals: 100}', 'spec.limits: the fleet\'s UpdatePolicy "platform" sets it'],
    ['rollout', 'rollout: {waves: [prod]}', 'spec.rollout: the fleet\'s UpdatePolicy "platform" sets it'],
    ['freezes', 'freezes: []', 'spec.freezes: the fleet\'s UpdatePolicy "platform" sets it'],
    [
      'an unknown field',
      'paused: true',
      'spec.paused: unknown field (expected one of packages, pause, ignore, updateTypes, schedule, wave, minimumReleaseAge)',
    ],
    ['a bad window', 'schedule: {windows: ["Tue-Thu 10-16"]}', 'spec.schedule.windows[0]: expected a window like'],
    [
      'an unknown time zone',
      'schedule: {timeZone: Mars/Olympus, windows: ["daily 10:00-16:00"]}',
      'spec.schedule.timeZone: unknown time zone "Mars/Olympus"',
    ],
    [
      'a pause until no date',
      'pause: {until: next week}',
      'spec.pause.until: expected a date (2026-12-20, 00:00 UTC) or an RFC 3339 date-time (2026-12-20T18:00:00Z), got "next week"',
    ],
    ['a pause of another type', 'pause: yes please', 'spec.pause: expected a map, got "yes please"'],
  ])('refuses %s, naming file, field and reason', (_, spec, want) => {
    const r = parse(team(spec));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors.join('\n')).toContain(`${FILE}: ${want}`);
  });

  it('a wave when the fleet has no rollout', () => {
    const r = parse(team('wave: prod'), fleetPolicy('{}'));
    expect(r).toEqual({ ok: false, errors: [`${FILE}: spec.wave: the fleet's UpdatePolicy "platform" has no rollout waves`] });
  });

  it.each([
    [
      'another kind',
      'apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nspec: {}\n',
      [`${FILE}: kind: expected DownstreamPolicy, got "UpdatePolicy"`],
    ],
    [
      'another apiVersion',
      'apiVersion: kdelta.dev/v1\nkind: DownstreamPolicy\nspec: {}\n',
      [`${FILE}: apiVersion: expected kdelta.dev/v1alpha1, got "kdelta.dev/v1"`],
    ],
    ['no spec', 'apiVersion: kdelta.dev/v1alpha1\nkind: DownstreamPolicy\n', [`${FILE}: spec: missing`]],
    ['two documents', `${team('{}')}---\n${team('{}')}`, [`${FILE}: expected one YAML document (a DownstreamPolicy), found 2`]],
    ['nothing', '', [`${FILE}: expected one YAML document (a DownstreamPolicy), found 0`]],
    ['a list', '- a\n', [`${FILE}: expected a DownstreamPolicy (a map with apiVersion, kind, metadata and spec)`]],
    ['invalid YAML', 'spec: [\n', [`${FILE}: invalid YAML (line 2): `]],
  ])('refuses a file of %s', (_, text, want) => {
    const r = parse(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e, i) => e.slice(0, want[i]?.length))).toEqual(want);
  });
});

describe('parseDownstreamPolicy: a hostile file', () => {
  it('a file over 64 KiB is refused unread', () => {
    const text = `${team('ignore: [v1]')}# ${'x'.repeat(DOWNSTREAM_POLICY_MAX_BYTES)}\n`;
    expect(parse(text)).toEqual({
      ok: false,
      errors: [`${FILE}: refused: ${Buffer.byteLength(text)} bytes, more than 65536 (a team's policy is a few lines)`],
    });
  });

  it('an alias bomb is refused, not expanded', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++)
      levels.push(
        `l${i}: &l${i} [${Array(9)
          .fill(i === 1 ? '*a' : `*l${i - 1}`)
          .join(', ')}]`,
      );
    const r = parse(`${team('{}')}${levels.map((l) => `x${l}`).join('\n')}\n`);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors.join('\n').length).toBeLessThan(2000);
  });

  it('never echoes more than a short quoted value, nor a control character', () => {
    const long = 'A'.repeat(5000);
    const r = parse(team(`wave: ${long}\n"${'k'.repeat(900)}\\e[31m": 1\n"\\e[31mred": 1\nupdateTypes: ["\\e]0;pwned\\a${long}"]`));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    for (const e of r.errors) {
      expect(e.length).toBeLessThanOrEqual(301);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
      expect(e).not.toMatch(/[\u0000-\u001f]/);
      expect(e).not.toContain('A'.repeat(41));
    }
    expect(r.errors.join('\n')).toContain(`${FILE}: spec.wave: "${'A'.repeat(40)}…" is not a wave`);
    expect(r.errors.join('\n')).toContain(`${FILE}: spec.\\u001b[31mred: unknown field`);
  });

  it('says at most 20 problems, then how many more', () => {
    const r = parse(team(Array.from({ length: 30 }, (_, i) => `bad${i}: 1`).join('\n')));
    expect(!r.ok && r.errors.length).toBe(21);
    expect(!r.ok && r.errors[20]).toBe(`${FILE}: and 10 more problems`);
  });
});
