import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { builtinSchemas } from './builtin.js';
import { BUILTIN_TABLE } from './builtin.generated.js';
import { at, listAt, objectAt, shape } from './__fixtures__/walk.js';
import { parseApiVersion } from './versions.js';

const reg = builtinSchemas();
const deployment = reg.lookup({ group: 'apps', version: 'v1', kind: 'Deployment' });
const POD_SPEC = 'spec.template.spec';

describe('builtinSchemas: Deployment (apps/v1)', () => {
  it('knows Deployment and keys containers by name', () => {
    expect(deployment?.kind).toBe('object');
    expect(shape(listAt(deployment, `${POD_SPEC}.containers`))).toEqual({ listType: 'map', keys: ['name'], explicit: true });
    expect(shape(listAt(deployment, `${POD_SPEC}.initContainers`))).toEqual({ listType: 'map', keys: ['name'], explicit: true });
  });

  it('keys container ports by [containerPort, protocol] (x-kubernetes-list-map-keys wins over the patch merge key)', () => {
    expect(shape(listAt(deployment, `${POD_SPEC}.containers[].ports`))).toEqual({
      listType: 'map',
      keys: ['containerPort', 'protocol'],
      explicit: true,
    });
  });

  it('keys env by name, volumeMounts by mountPath, volumeDevices by devicePath', () => {
    expect(listAt(deployment, `${POD_SPEC}.containers[].env`).keys).toEqual(['name']);
    expect(listAt(deployment, `${POD_SPEC}.containers[].volumeMounts`).keys).toEqual(['mountPath']);
    expect(listAt(deployment, `${POD_SPEC}.containers[].volumeDevices`).keys).toEqual(['devicePath']);
  });

  it('keys volumes by name (patch strategy "merge,retainKeys" contains merge)', () => {
    expect(shape(listAt(deployment, `${POD_SPEC}.volumes`))).toEqual({ listType: 'map', keys: ['name'], explicit: true });
  });

  it('treats metadata.finalizers as a set (patch strategy merge without a key)', () => {
    expect(shape(listAt(deployment, 'metadata.finalizers'))).toEqual({ listType: 'set', keys: [], explicit: true });
  });

  it('treats args and command as atomic lists the schema says nothing special about', () => {
    expect(shape(listAt(deployment, `${POD_SPEC}.containers[].args`))).toEqual({ listType: 'atomic', keys: [], explicit: false });
    expect(listAt(deployment, `${POD_SPEC}.containers[].command`).listType).toBe('atomic');
  });

  it('keys topologySpreadConstraints by [topologyKey, whenUnsatisfiable]', () => {
    expect(listAt(deployment, `${POD_SPEC}.topologySpreadConstraints`).keys).toEqual(['topologyKey', 'whenUnsatisfiable']);
  });

  it('makes label selectors atomic maps (x-kubernetes-map-type)', () => {
    expect(objectAt(deployment, 'spec.selector').mapType).toBe('atomic');
    expect(objectAt(deployment, 'spec.template.metadata').mapType).toBe('granular');
  });

  it('says nothing about scalars and unknown fields', () => {
    expect(at(deployment, 'spec.replicas')).toBeUndefined();
    expect(at(deployment, `${POD_SPEC}.containers[].image`)).toBeUndefined();
    expect(at(deployment, 'spec.noSuchField')).toBeUndefined();
    // names that exist on Object.prototype are fields like any other
    expect(at(deployment, 'spec.constructor')).toBeUndefined();
    expect(at(deployment, 'spec.__proto__')).toBeUndefined();
  });

  it('returns the same node objects on every lookup (built once)', () => {
    const again = reg.lookup({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(again).toBe(deployment);
    expect(at(again, 'spec.template')).toBe(at(deployment, 'spec.template'));
    expect(listAt(again, `${POD_SPEC}.containers`)).toBe(listAt(deployment, `${POD_SPEC}.containers`));
  });
});

describe('builtinSchemas: lookup by group and kind', () => {
  it('finds core kinds in group "" (apiVersion v1)', () => {
    const pod = reg.lookup({ ...parseApiVersion('v1'), kind: 'Pod' });
    expect(listAt(pod, 'spec.containers').keys).toEqual(['name']);
    const svc = reg.lookup({ group: '', version: 'v1', kind: 'Service' });
    expect(listAt(svc, 'spec.ports').keys).toEqual(['port', 'protocol']);
  });

  it('uses the group from apiVersion: apps/v1 Deployment is known, extensions/v1beta1 Deployment is not (removed before 1.21)', () => {
    expect(reg.lookup({ ...parseApiVersion('apps/v1'), kind: 'Deployment' })).toBe(deployment);
    expect(reg.lookup({ ...parseApiVersion('extensions/v1beta1'), kind: 'Deployment' })).toBeUndefined();
    expect(reg.lookup({ group: '', version: 'v1', kind: 'Deployment' })).toBeUndefined();
    expect(reg.lookup({ ...parseApiVersion('extensions/v1beta1'), kind: 'Ingress' })).toBeDefined();
  });

  it('returns undefined for unknown kinds and groups', () => {
    expect(reg.lookup({ group: 'example.com', version: 'v1', kind: 'Widget' })).toBeUndefined();
    expect(reg.lookup({ group: 'apps', version: 'v1', kind: 'Widget' })).toBeUndefined();
    expect(reg.lookup({ group: 'apps', version: 'v1', kind: 'constructor' })).toBeUndefined();
  });

  it('ignores the version when the versions agree (one shared entry)', () => {
    const cronV1 = reg.lookup({ group: 'batch', version: 'v1', kind: 'CronJob' });
    expect(cronV1).toBeDefined();
    expect(reg.lookup({ group: 'batch', version: 'v1beta1', kind: 'CronJob' })).toBe(cronV1);
    expect(reg.lookup({ group: 'apps', version: 'v1beta2', kind: 'Deployment' })).toBe(deployment);
  });

  it('prefers the exact version when the definitions differ, else the newest (GA before beta)', () => {
    const hpa = (version: string) => reg.lookup({ group: 'autoscaling', version, kind: 'HorizontalPodAutoscaler' });
    expect(listAt(hpa('v2beta2'), 'spec.metrics').listType).toBe('atomic');
    expect(listAt(hpa('v2beta1'), 'spec.metrics').listType).toBe('atomic');
    expect(at(hpa('v1'), 'spec.metrics')).toBeUndefined(); // v1 has no metrics list
    expect(hpa('v2beta2')).not.toBe(hpa('v2beta1'));
    expect(hpa('v3')).toBe(hpa('v1'));
    const ingress = (version: string) => reg.lookup({ group: 'networking.k8s.io', version, kind: 'Ingress' });
    expect(ingress('v1beta1')).not.toBe(ingress('v1'));
    expect(ingress('v9')).toBe(ingress('v1'));
  });

  it('keeps the KEP list types: list-type map without a patch strategy is still a map, list-type atomic wins over a patch strategy', () => {
    const csr = reg.lookup({ group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest' });
    expect(shape(listAt(csr, 'status.conditions'))).toEqual({ listType: 'map', keys: ['type'], explicit: true });
    expect(shape(listAt(csr, 'spec.usages'))).toEqual({ listType: 'atomic', keys: [], explicit: true });
    const job = reg.lookup({ group: 'batch', version: 'v1', kind: 'Job' });
    expect(listAt(job, 'status.conditions').listType).toBe('atomic');
  });

  it('resolves additionalProperties: a map of string lists', () => {
    const csr = reg.lookup({ group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest' });
    expect(listAt(csr, 'spec.extra.anyKey').listType).toBe('atomic');
  });

  it('walks recursive definitions (CRD JSONSchemaProps) lazily', () => {
    const crd = reg.lookup({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' });
    const versions = listAt(crd, 'spec.versions');
    expect(versions.keys).toEqual([]);
    const deep = at(crd, 'spec.versions[].schema.openAPIV3Schema.properties.spec.properties.x.not');
    expect(deep).toBe(at(crd, 'spec.versions[].schema.openAPIV3Schema'));
  });

  it("knows Kustomization generators are keyed by name, as kyaml's builtin schema does", () => {
    const k = reg.lookup({ group: 'kustomize.config.k8s.io', version: 'v1beta1', kind: 'Kustomization' });
    expect(listAt(k, 'configMapGenerator').keys).toEqual(['name']);
    expect(listAt(k, 'secretGenerator').keys).toEqual(['name']);
    expect(at(k, 'resources')).toBeUndefined();
  });

  it('resolves definitions by OpenAPI name, including names merged into a shared entry', () => {
    const container = reg.definition('io.k8s.api.core.v1.Container');
    expect(listAt(container, 'ports').keys).toEqual(['containerPort', 'protocol']);
    expect(reg.definition('io.k8s.api.apps.v1.DeploymentSpec')).toBe(at(deployment, 'spec'));
    expect(reg.definition('io.k8s.api.core.v1.NoSuchThing')).toBeUndefined();
  });
});

describe('generated table', () => {
  it('stays compact', () => {
    const text = readFileSync(new URL('./builtin.generated.ts', import.meta.url), 'utf8');
    expect(text.length).toBeLessThan(150_000);
    expect(text.startsWith('// GENERATED FILE - DO NOT EDIT.')).toBe(true);
    expect(BUILTIN_TABLE.kinds.length).toBeGreaterThan(100);
  });

  it('has every reference in range', () => {
    const n = BUILTIN_TABLE.defs.length;
    const refs = JSON.stringify(BUILTIN_TABLE.defs.map(([, d]) => d)).match(/:\d+/g) ?? [];
    for (const r of refs) expect(Number(r.slice(1))).toBeLessThan(n);
    for (const [, , versions] of BUILTIN_TABLE.kinds) for (const [, i] of versions) expect(i).toBeLessThan(n);
  });
});

describe('conformance: kyaml element cases resolved through the builtin schema', () => {
  const fixture = parse(readFileSync(new URL('./__fixtures__/kyaml-element-schemas.yaml', import.meta.url), 'utf8')) as {
    cases: { id: string; local: string }[];
  };
  const local = (id: string): { apiVersion: string; kind: string } => {
    const c = fixture.cases.find((x) => x.id === id);
    if (!c) throw new Error(`fixture case ${id} missing`);
    return parse(c.local) as { apiVersion: string; kind: string };
  };

  it('elementTestCases/17: apps/v1 Deployment containers merge by name without inference', () => {
    const doc = local('elementTestCases/17');
    const root = reg.lookup({ ...parseApiVersion(doc.apiVersion), kind: doc.kind });
    expect(listAt(root, `${POD_SPEC}.containers`).keys).toEqual(['name']);
  });

  it('elementTestCases/30: ports matched on [containerPort, protocol]', () => {
    const doc = local('elementTestCases/30');
    const root = reg.lookup({ ...parseApiVersion(doc.apiVersion), kind: doc.kind });
    expect(listAt(root, `${POD_SPEC}.containers[].ports`).keys).toEqual(['containerPort', 'protocol']);
  });

  it('elementTestCases/20: apiVersion "custom" Deployment has no root schema', () => {
    const doc = local('elementTestCases/20');
    expect(reg.lookup({ ...parseApiVersion(doc.apiVersion), kind: doc.kind })).toBeUndefined();
  });
});
