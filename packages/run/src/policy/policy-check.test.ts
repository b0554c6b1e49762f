import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ControlError, loadControl, type ControlConfig } from '../control/control.js';
import type { UpdatePolicy } from './policy.js';
import { FULL_POLICY_SPEC } from './__fixtures__/full-policy.js';

const root = mkdtempSync(join(tmpdir(), 'kdelta-policy-check-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function configDir(files: Record<string, string>): string {
  const dir = join(root, `c${++n}`);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const REPOS = ['blueprints', 'cluster-a']
  .map(
    (r) => `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${r}\nspec:\n  git:\n    repo: /tmp/${r}.git\n`,
  )
  .join('---\n');
const SET =
  'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: basens-fleet\nspec:\n  upstream: {repo: blueprints, package: basens}\n  targets:\n  - repositories: [{name: cluster-a}]\n';

const policy = (spec: string, name = 'platform') =>
  `apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, '  ')}\n`;

async function load(files: Record<string, string>): Promise<ControlConfig> {
  return loadControl({ dir: configDir({ 'repos.yaml': REPOS, 'set.yaml': SET, ...files }), display: '.kdelta' });
}

async function problems(files: Record<string, string>): Promise<string> {
  const error = await load(files).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ControlError);
  return (error as Error).message;
}

describe('UpdatePolicy: read into ControlConfig.policies', () => {
  it("reads every field of the design's example", async () => {
    const config = await load({ 'policy.yaml': policy(FULL_POLICY_SPEC) });
    expect(config.policies).toHaveLength(1);
    const p = config.policies[0]!;
    expect(p).toMatchObject({
      name: 'platform',
      source: { file: '.kdelta/policy.yaml', document: 1, kind: 'UpdatePolicy', name: 'platform' },
      selector: {
        packageVariantSets: ['basens-fleet'],
        packageVariants: ['web-*'],
        upstream: { repo: 'blueprints', package: 'basens' },
        downstreamLabels: { env: 'prod' },
      },
      ignore: ['v1.4.0', 'v2.*'],
      minimumReleaseAgeMs: 3 * 24 * 3600_000,
      separateMajor: true,
      limits: { openProposals: 10, perHour: 5 },
      group: 'repository',
      autoMerge: { upstreams: ['blueprints'] },
      rollout: {
        label: 'kdelta.dev/wave',
        waves: ['canary', 'early', 'prod'],
        soakMs: 2 * 3600_000,
        health: { name: 'flux-system', kind: 'any' },
        halted: [{ revision: 'v1.5.0', reason: 'paging alert on canary' }],
        advanced: [{ revision: 'v1.5.0', wave: 'early' }],
      },
    });
    expect([...p.updateTypes]).toEqual(['patch', 'minor']);
    expect([...p.autoMerge!.updateTypes]).toEqual(['patch']);
    expect(p.freezes).toEqual([
      { from: new Date('2026-12-20T00:00:00Z'), until: new Date('2027-01-04T00:00:00Z'), reason: 'year-end freeze' },
    ]);
    expect(p.schedule?.timeZone).toBe('Europe/Berlin');
    expect(p.schedule?.windows).toEqual([
      { kind: 'weekly', days: [1, 2, 3, 4, 5], from: 540, until: 1020, text: 'Mon-Fri 09:00-17:00' },
      { kind: 'weekly', days: [6], from: 600, until: 720, text: 'Sat 10:00-12:00' },
      {
        kind: 'cron',
        minutes: Array.from({ length: 60 }, (_, i) => i),
        hours: [9, 10, 11, 12, 13, 14, 15, 16],
        daysOfMonth: Array.from({ length: 31 }, (_, i) => i + 1),
        months: Array.from({ length: 12 }, (_, i) => i + 1),
        daysOfWeek: [1, 2, 3, 4, 5],
        daysRestricted: { month: false, week: true },
        text: 'cron: * 9-16 * * 1-5',
      },
    ]);
  });

  it('the defaults: every variant, every update type, no age, majors apart, no schedule, freeze, limit, grouping, auto-merge or rollout', async () => {
    const config = await load({ 'policy.yaml': policy('{}') });
    const p: UpdatePolicy = config.policies[0]!;
    expect(p).toMatchObject({
      selector: {},
      ignore: [],
      minimumReleaseAgeMs: 0,
      separateMajor: true,
      freezes: [],
      limits: {},
      group: 'none',
    });
    expect([...p.updateTypes]).toEqual(['patch', 'minor', 'major']);
    expect(p.schedule).toBeUndefined();
    expect(p.autoMerge).toBeUndefined();
    expect(p.rollout).toBeUndefined();
    // a rollout written as {} takes the default label, waves and no soak
    const r = (await load({ 'policy.yaml': policy('rollout: {}') })).policies[0]!.rollout;
    expect(r).toEqual({
      label: 'kdelta.dev/wave',
      waves: ['canary', 'early', 'prod'],
      soakMs: 0,
      health: undefined,
      halted: [],
      advanced: [],
    });
  });

  it.each([
    ['1h30m', 5400_000],
    ['30s', 30_000],
    ['15m', 900_000],
    ['1w', 7 * 24 * 3600_000],
    ['1w2d', 9 * 24 * 3600_000],
    ['0', 0],
  ])('a duration %s is %d ms', async (text, ms) => {
    const p = (await load({ 'policy.yaml': policy(`minimumReleaseAge: ${text}\nrollout: {soak: ${text}}`) })).policies[0]!;
    expect(p.minimumReleaseAgeMs).toBe(ms);
    expect(p.rollout?.soakMs).toBe(ms);
  });

  it.each([
    ['daily 09:00-17:00', { days: [0, 1, 2, 3, 4, 5, 6], from: 540, until: 1020 }],
    ['Fri 22:00-02:00', { days: [5], from: 1320, until: 120 }],
    ['Mon,Wed,Fri 08:00-24:00', { days: [1, 3, 5], from: 480, until: 1440 }],
    ['Sat-Mon 00:00-06:30', { days: [0, 1, 6], from: 0, until: 390 }],
  ])('a weekly window %s', async (text, want) => {
    const p = (await load({ 'policy.yaml': policy(`schedule: {windows: ["${text}"]}`) })).policies[0]!;
    expect(p.schedule).toEqual({ timeZone: 'UTC', windows: [{ kind: 'weekly', text, ...want }] });
  });

  it.each([
    [
      'cron: 0,30 9-17/4 1,15 jan-mar MON-FRI',
      {
        minutes: [0, 30],
        hours: [9, 13, 17],
        daysOfMonth: [1, 15],
        months: [1, 2, 3],
        daysOfWeek: [1, 2, 3, 4, 5],
        daysRestricted: { month: true, week: true },
      },
    ],
    [
      'cron: */20 0 * * 7',
      {
        minutes: [0, 20, 40],
        hours: [0],
        months: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        daysOfWeek: [0],
        daysRestricted: { month: false, week: true },
      },
    ],
    [
      'cron: 5/30 * */10 DEC sun,sat',
      { minutes: [5, 35], daysOfMonth: [1, 11, 21, 31], months: [12], daysOfWeek: [0, 6], daysRestricted: { month: false, week: true } },
    ],
  ])('a cron window %s', async (text, want) => {
    const p = (await load({ 'policy.yaml': policy(`schedule: {windows: ["${text}"]}`) })).policies[0]!;
    expect(p.schedule?.windows[0]).toMatchObject({ kind: 'cron', text, ...want });
  });

  const at = '.kdelta/policy.yaml: document 1 (UpdatePolicy "platform")';
  it.each([
    [
      'an unknown field',
      'updateType: [patch]',
      'updateType: unknown field (expected one of selector, updateTypes, ignore, minimumReleaseAge, separateMajor, schedule, freezes, limits, group, autoMerge, rollout)',
    ],
    ['an unknown top-level field', null, 'status: unknown field (expected one of apiVersion, kind, metadata, spec)'],
    [
      'an unknown selector field',
      'selector: {labels: {env: prod}}',
      'spec.selector.labels: unknown field (expected one of packageVariantSets, packageVariants, upstream, downstreamLabels)',
    ],
    [
      'an unknown update type',
      'updateTypes: [patch, mayor]',
      'spec.updateTypes[1]: unknown update type "mayor" (expected patch, minor or major)',
    ],
    [
      'no update type',
      'updateTypes: []',
      'spec.updateTypes: empty: list at least one update types (patch, minor, major) (or leave the field out)',
    ],
    ['an update type twice', 'updateTypes: [patch, patch]', 'spec.updateTypes[1]: "patch" is listed twice'],
    [
      'a bad duration',
      'minimumReleaseAge: 3 days',
      'spec.minimumReleaseAge: expected a duration like 30s, 15m, 2h, 3d, 1w or 1h30m, got "3 days"',
    ],
    ['a number as duration', 'rollout: {soak: 30}', 'spec.rollout.soak: expected a duration like 30s, 15m, 2h, 3d, 1w or 1h30m, got 30'],
    ['units out of order', 'minimumReleaseAge: 30m1h', 'spec.minimumReleaseAge: "30m1h": units go largest first, each once (like 1h30m)'],
    [
      'a bad window',
      'schedule: {windows: ["Mon-Fri 09:00-17:00", "weekdays 9-5"]}',
      'spec.schedule.windows[1]: expected a window like "Mon-Fri 09:00-17:00", "daily 09:00-17:00", "Fri 22:00-02:00" or "cron: * 9-16 * * 1-5", got "weekdays 9-5"',
    ],
    [
      'an unknown day',
      'schedule: {windows: ["Mon-Fry 09:00-17:00"]}',
      'spec.schedule.windows[0]: "Mon-Fry 09:00-17:00": unknown days "Mon-Fry" (expected Mon-Fri, Sat, Mon,Wed or daily)',
    ],
    [
      'a time past the day',
      'schedule: {windows: ["Mon 09:00-25:00"]}',
      'spec.schedule.windows[0]: "Mon 09:00-25:00": times are 00:00 to 24:00',
    ],
    [
      'an empty window',
      'schedule: {windows: ["Mon 09:00-09:00"]}',
      'spec.schedule.windows[0]: "Mon 09:00-09:00": the window opens and closes at the same minute',
    ],
    [
      'a cron of four fields',
      'schedule: {windows: ["cron: * 9-16 * *"]}',
      'spec.schedule.windows[0]: "cron: * 9-16 * *": a cron window has five fields (minute hour day-of-month month day-of-week)',
    ],
    [
      'a cron hour out of range',
      'schedule: {windows: ["cron: * 9-24 * * *"]}',
      'spec.schedule.windows[0]: "cron: * 9-24 * * *": hour: 24 is outside 0-23',
    ],
    [
      'a cron range backwards',
      'schedule: {windows: ["cron: * 17-9 * * *"]}',
      'spec.schedule.windows[0]: "cron: * 17-9 * * *": hour: "17-9": a range goes from low to high',
    ],
    [
      'a cron name in the wrong field',
      'schedule: {windows: ["cron: * * * mon *"]}',
      'spec.schedule.windows[0]: "cron: * * * mon *": month: "mon" is not a number or a name',
    ],
    [
      'a cron step of 0',
      'schedule: {windows: ["cron: */0 * * * *"]}',
      'spec.schedule.windows[0]: "cron: */0 * * * *": minute: "*/0": a step is at least 1',
    ],
    [
      'an unknown time zone',
      'schedule: {timeZone: Europe/Berlinn, windows: ["daily 09:00-17:00"]}',
      'spec.schedule.timeZone: unknown time zone "Europe/Berlinn" (expected an IANA name like Europe/Berlin or UTC)',
    ],
    [
      'a schedule without windows',
      'schedule: {timeZone: UTC}',
      'spec.schedule.windows: missing (a schedule lists the windows in which new proposals may be made)',
    ],
    [
      'a freeze ending before it starts',
      'freezes: [{from: 2027-01-04, until: 2026-12-20}]',
      'spec.freezes[0].until: must be after from ("2027-01-04"): until is exclusive',
    ],
    ['a freeze without until', 'freezes: [{from: 2026-12-20}]', 'spec.freezes[0].until: missing'],
    [
      'a freeze on no calendar day',
      'freezes: [{from: 2026-02-30, until: 2026-03-02}]',
      'spec.freezes[0].from: expected a date (2026-12-20, 00:00 UTC) or an RFC 3339 date-time (2026-12-20T18:00:00Z), got "2026-02-30"',
    ],
    [
      'a date-time without its offset',
      'freezes: [{from: "2026-12-20T10:00:00", until: 2026-12-21}]',
      'spec.freezes[0].from: expected a date (2026-12-20, 00:00 UTC) or an RFC 3339 date-time (2026-12-20T18:00:00Z), got "2026-12-20T10:00:00"',
    ],
    ['a limit of 0', 'limits: {openProposals: 0}', 'spec.limits.openProposals: expected a positive whole number, got 0'],
    ['a limit of 2.5', 'limits: {perHour: 2.5}', 'spec.limits.perHour: expected a positive whole number, got 2.5'],
    ['an unknown group', 'group: cluster', 'spec.group: expected none or repository, got "cluster"'],
    [
      'auto-merge of an update type never proposed',
      'updateTypes: [patch]\nautoMerge: {updateTypes: [patch, minor]}',
      'spec.autoMerge.updateTypes[1]: "minor" is never proposed (spec.updateTypes: patch)',
    ],
    [
      'auto-merge without update types',
      'autoMerge: {upstreams: [blueprints]}',
      'spec.autoMerge.updateTypes: missing (the update types merged without a person, e.g. [patch])',
    ],
    [
      'auto-merge from an unknown upstream',
      'autoMerge: {updateTypes: [patch], upstreams: [blueprints, bluprints]}',
      'spec.autoMerge.upstreams[1]: Repository "bluprints" does not exist (the Repositories are blueprints, cluster-a)',
    ],
    [
      'a selector naming an unknown set',
      'selector: {packageVariantSets: [basens]}',
      'spec.selector.packageVariantSets[0]: PackageVariantSet "basens" does not exist (the sets are basens-fleet)',
    ],
    [
      'a selector naming an unknown upstream',
      'selector: {upstream: {repo: catalog}}',
      'spec.selector.upstream.repo: Repository "catalog" does not exist (the Repositories are blueprints, cluster-a)',
    ],
    ['a selector upstream without repo', 'selector: {upstream: {package: basens}}', 'spec.selector.upstream.repo: missing'],
    [
      'a label value that is not a string',
      'selector: {downstreamLabels: {tier: 1}}',
      'spec.selector.downstreamLabels.tier: expected a string (quote it), got 1',
    ],
    ['waves twice', 'rollout: {waves: [canary, prod, canary]}', 'spec.rollout.waves[2]: "canary" is listed twice'],
    ['no waves', 'rollout: {waves: []}', 'spec.rollout.waves: empty: list at least one wave names (or leave the field out)'],
    [
      'a wave that is no label value',
      'rollout: {waves: [canary, "prod eu"]}',
      'spec.rollout.waves[1]: "prod eu" is not a label value (a Repository\'s label names its wave)',
    ],
    ['a bad wave label', 'rollout: {label: "wave!"}', 'spec.rollout.label: "wave!" is not a label key (like kdelta.dev/wave)'],
    ['a health signal without name', 'rollout: {health: {kind: status}}', 'spec.rollout.health.name: missing'],
    [
      'a health signal of an unknown kind',
      'rollout: {health: {name: flux, kind: statuses}}',
      'spec.rollout.health.kind: expected status, check-run or any, got "statuses"',
    ],
    ['a halt without reason', 'rollout: {halted: [{revision: v1.5.0}]}', 'spec.rollout.halted[0].reason: missing'],
    [
      'an advance to an unknown wave',
      'rollout: {advanced: [{revision: v1.5.0, wave: erly}]}',
      'spec.rollout.advanced[0].wave: unknown wave "erly" (the waves are canary, early, prod)',
    ],
    ['separateMajor not a boolean', 'separateMajor: "yes please"', 'spec.separateMajor: expected true or false, got "yes please"'],
  ])('%s is an error naming file, document, field and reason', async (_, spec, want) => {
    const text = spec === null ? `${policy('{}')}status: {}\n` : policy(spec);
    const message = await problems({ 'policy.yaml': text });
    expect(message).toContain(`${at}: ${want.startsWith('spec') || want.startsWith('status') ? want : `spec.${want}`}`);
  });

  it('every problem at once, each with its line', async () => {
    const message = await problems({ 'policy.yaml': policy('minimumReleaseAge: soon\nrollout:\n  soak: later\n  waves: [a, a]') });
    expect(message).toContain('invalid control configuration (3 problems)');
    expect(message).toContain(`${at}: spec.minimumReleaseAge: expected a duration like 30s, 15m, 2h, 3d, 1w or 1h30m, got "soon" (line 6)`);
    expect(message).toContain(`${at}: spec.rollout.soak: expected a duration like 30s, 15m, 2h, 3d, 1w or 1h30m, got "later" (line 8)`);
    expect(message).toContain(`${at}: spec.rollout.waves[1]: "a" is listed twice (line 9)`);
  });

  it('a DownstreamPolicy in the control repository is an error: it belongs in the downstream repository', async () => {
    const text = 'apiVersion: kdelta.dev/v1alpha1\nkind: DownstreamPolicy\nmetadata:\n  name: team\nspec:\n  pause: true\n';
    expect(await problems({ 'team.yaml': text })).toContain(
      '.kdelta/team.yaml: document 1 (DownstreamPolicy "team"): kind: DownstreamPolicy belongs in a downstream repository at .kdelta/downstream-policy.yaml (the control repository holds UpdatePolicy)',
    );
  });

  it.each([
    ['kdelta.dev/v1alpha2', 'UpdatePolicy', 'kind: UpdatePolicy is read as kdelta.dev/v1alpha1, not kdelta.dev/v1alpha2'],
    [
      'kdelta.dev/v1alpha1',
      'UpdatePolicie',
      'kind: unknown kind "UpdatePolicie" in kdelta.dev/v1alpha1: did you mean UpdatePolicy? (a run reads RunSettings and UpdatePolicy in kdelta.dev/v1alpha1)',
    ],
    [
      'kdelta.io/v1alpha1',
      'UpdatePolicy',
      'apiVersion: unknown group "kdelta.io" for UpdatePolicy: did you mean kdelta.dev/v1alpha1 (kind UpdatePolicy)? A run reads it only there',
    ],
  ])('a near miss %s %s is named, not read as a plain object', async (apiVersion, kind, want) => {
    const text = `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: p\nspec: {}\n`;
    expect(await problems({ 'p.yaml': text })).toContain(`.kdelta/p.yaml: document 1 (${kind} "p"): ${want}`);
  });
});
