import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadControl } from '../control/control.js';
import { parseDownstreamPolicy } from './downstream-policy.js';
import { FULL_POLICY_SPEC } from './__fixtures__/full-policy.js';

const schemaDir = new URL('../../schema/', import.meta.url).pathname;
const read = (file: string) => JSON.parse(readFileSync(join(schemaDir, file), 'utf8')) as { definitions: Record<string, SchemaNode> };
interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  $ref?: string;
}
const config = read('kdelta-config.schema.json');
const downstream = read('downstream-policy.schema.json');
const ajv = () => new Ajv({ allErrors: true, strict: false });
const validateConfig = ajv().compile(config);
const validateDownstream = ajv().compile(downstream);
const js = (text: string) => parseAllDocuments(text)[0]!.toJS() as unknown;

const root = mkdtempSync(join(tmpdir(), 'kdelta-policy-schema-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const REPOS = ['blueprints', 'cluster-a']
  .map(
    (r) => `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${r}\nspec:\n  git:\n    repo: /tmp/${r}.git\n`,
  )
  .join('---\n');
const SET =
  'apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: basens-fleet\nspec:\n  upstream: {repo: blueprints, package: basens}\n  targets:\n  - repositories: [{name: cluster-a}]\n';

/** The loader's own message for a document, '' when it reads it. */
async function loaderSays(policy: string): Promise<string> {
  const dir = join(root, `c${++n}`);
  mkdirSync(dir, { recursive: true });
  for (const [f, t] of Object.entries({ 'repos.yaml': REPOS, 'set.yaml': SET, 'policy.yaml': policy })) writeFileSync(join(dir, f), t);
  return loadControl({ dir, display: '.kdelta' }).then(
    () => '',
    (e: unknown) => (e as Error).message,
  );
}

/** The design's examples (docs/update-policy.md shows them too). */
const UPDATE_POLICY = `apiVersion: kdelta.dev/v1alpha1
kind: UpdatePolicy
metadata:
  name: platform
spec:
${FULL_POLICY_SPEC.replace(/^/gm, '  ')}
`;

const DOWNSTREAM_POLICY = `apiVersion: kdelta.dev/v1alpha1
kind: DownstreamPolicy
metadata: {name: team-payments}
spec:
  packages: ["basens*"]
  pause: {until: 2026-12-07T00:00:00Z, reason: migration week}
  ignore: [v1.5.0]
  updateTypes: [patch]
  schedule: {timeZone: America/New_York, windows: ["Tue-Thu 10:00-16:00"]}
  wave: prod
  minimumReleaseAge: 7d
`;

const withSpec = (spec: string) => UPDATE_POLICY.replace(/spec:\n[\s\S]*$/, `spec:\n${spec.replace(/^/gm, '  ')}\n`);

describe('the JSON Schema of UpdatePolicy', () => {
  it("accepts the design's example, as the loader does", async () => {
    expect(validateConfig(js(UPDATE_POLICY)), JSON.stringify(validateConfig.errors)).toBe(true);
    expect(await loaderSays(UPDATE_POLICY)).toBe('');
  });

  it.each([
    ['an unknown field', 'updateType: [patch]'],
    ['an unknown update type', 'updateTypes: [mayor]'],
    ['no update type', 'updateTypes: []'],
    ['a duration in words', 'minimumReleaseAge: 3 days'],
    ['a duration without unit', 'rollout: {soak: 30}'],
    ['a window without times', 'schedule: {windows: [weekdays]}'],
    ['a schedule without windows', 'schedule: {timeZone: UTC}'],
    ['a freeze without until', 'freezes: [{from: 2026-12-20}]'],
    ['a date-time without offset', 'freezes: [{from: "2026-12-20T10:00:00", until: 2026-12-21}]'],
    ['a limit of 0', 'limits: {openProposals: 0}'],
    ['an unknown group', 'group: cluster'],
    ['auto-merge without update types', 'autoMerge: {upstreams: [blueprints]}'],
    ['waves twice', 'rollout: {waves: [canary, canary]}'],
    ['a health signal of an unknown kind', 'rollout: {health: {name: flux, kind: statuses}}'],
    ['a halt without reason', 'rollout: {halted: [{revision: v1}]}'],
  ])('rejects %s, as the loader does', async (_, spec) => {
    const doc = withSpec(spec);
    expect(validateConfig(js(doc))).toBe(false);
    expect(await loaderSays(doc)).toContain('invalid control configuration');
  });

  it('has every field the loader reads, at every level', async () => {
    const at = (path: string[]): string[] => {
      let node: SchemaNode | undefined = config.definitions.UpdatePolicy;
      for (const p of path) {
        node = node?.properties?.[p];
        if (node?.$ref) node = config.definitions[node.$ref.replace('#/definitions/', '')];
      }
      return Object.keys(node?.properties ?? {}).sort();
    };
    /** The fields the loader allows at `path`, from its "unknown field (expected one of …)" message. */
    const allowed = async (path: string[]): Promise<string[]> => {
      const nested = path.reduceRight((inner, key) => `{${key}: ${inner}}`, '{zzz: 1}');
      const spec = nested.slice(1, -1);
      const message = await loaderSays(withSpec(spec.replace(/^spec: /, '')));
      const list = /zzz: unknown field \(expected one of ([^)]*)\)/.exec(message)?.[1];
      expect(list, message).toBeDefined();
      return list!.split(', ').sort();
    };
    for (const path of [
      ['spec'],
      ['spec', 'selector'],
      ['spec', 'schedule'],
      ['spec', 'limits'],
      ['spec', 'autoMerge'],
      ['spec', 'rollout'],
      ['spec', 'rollout', 'health'],
    ]) {
      expect(at(path), path.join('.')).toEqual(await allowed(path));
    }
  });
});

describe('the JSON Schema of DownstreamPolicy (schema/downstream-policy.schema.json)', () => {
  const fleetDir = async () => {
    const dir = join(root, `c${++n}`);
    mkdirSync(dir, { recursive: true });
    for (const [f, t] of Object.entries({
      'repos.yaml': REPOS,
      'set.yaml': SET,
      'policy.yaml': UPDATE_POLICY.replace('updateTypes: [patch, minor]', 'updateTypes: [patch, minor, major]'),
    }))
      writeFileSync(join(dir, f), t);
    return (await loadControl({ dir, display: '.kdelta' })).policies[0]!;
  };

  it("accepts the design's example, as the parser does", async () => {
    expect(validateDownstream(js(DOWNSTREAM_POLICY)), JSON.stringify(validateDownstream.errors)).toBe(true);
    expect(validateDownstream(js(DOWNSTREAM_POLICY.replace(/pause: .*/, 'pause: true')))).toBe(true);
    expect(parseDownstreamPolicy(DOWNSTREAM_POLICY, { file: 'x', fleet: await fleetDir() }).ok).toBe(true);
  });

  it.each([
    ['a fleet-only field', 'autoMerge: {updateTypes: [major]}'],
    ['an unknown field', 'paused: true'],
    ['an unknown update type', 'updateTypes: [mayor]'],
    ['a pause of words', 'pause: next week'],
    ['a duration in words', 'minimumReleaseAge: a week'],
  ])('rejects %s, as the parser does', async (_, line) => {
    const doc = `${DOWNSTREAM_POLICY.replace(/spec:\n[\s\S]*$/, 'spec:\n')}  ${line}\n`;
    expect(validateDownstream(js(doc))).toBe(false);
    expect(parseDownstreamPolicy(doc, { file: 'x', fleet: await fleetDir() }).ok).toBe(false);
  });
});
