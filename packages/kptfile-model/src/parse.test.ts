import { describe, expect, it } from 'vitest';
import { KptfileError } from './errors.js';
import { formatKptfile } from './format.js';
import { imageWithoutTag } from './image.js';
import { decodeKptfile, parseKptfile, printKptfile } from './parse.js';
import { derivedFunctionKey, pipelineKeyMode } from './pipeline-key.js';
import { parseKrmIgnore } from './krmignore.js';
import { editPackageContext, packageContextConfigMap } from './package-context.js';
import { addMergeComments } from './merge-comment.js';

const FULL = `# Package of the web tier.
apiVersion: kpt.dev/v1
kind: Kptfile
metadata: # kpt-merge: /web
  name: web
  annotations:
    config.kubernetes.io/local-config: "true"
upstream:
  type: git
  git:
    repo: https://example.com/blueprints.git
    directory: /web
    ref: v1.2.0
  updateStrategy: resource-merge
upstreamLock:
  type: git
  git:
    repo: https://example.com/blueprints.git
    directory: /web
    ref: v1.2.0
    commit: 0123456789abcdef0123456789abcdef01234567
info:
  description: The web tier
  emails: [ops@example.com]
  readinessGates:
    - conditionType: Ready
pipeline:
  mutators:
    # sets labels everywhere
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2
      configMap:
        tier: web # the tier
      selectors:
        - kind: Deployment
  validators:
    - exec: ./validate.sh
      exclude:
        - namespace: kube-system
inventory:
  namespace: web
  name: inv
  inventoryID: 1234
status:
  conditions:
    - type: Ready
      status: "True"
`;

describe('parseKptfile', () => {
  it('reads every section into the typed model', () => {
    const { kptfile } = parseKptfile(FULL);
    expect(kptfile.upstream).toEqual({
      type: 'git',
      git: { repo: 'https://example.com/blueprints.git', directory: '/web', ref: 'v1.2.0' },
      updateStrategy: 'resource-merge',
    });
    expect(kptfile.upstreamLock?.git?.commit).toBe('0123456789abcdef0123456789abcdef01234567');
    expect(kptfile.info).toEqual({
      description: 'The web tier',
      emails: ['ops@example.com'],
      readinessGates: [{ conditionType: 'Ready' }],
    });
    expect(kptfile.pipeline?.mutators?.[0]).toEqual({
      image: 'ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2',
      configMap: { tier: 'web' },
      selectors: [{ kind: 'Deployment' }],
    });
    expect(kptfile.pipeline?.validators?.[0]).toEqual({ exec: './validate.sh', exclude: [{ namespace: 'kube-system' }] });
    // A number in a string field keeps its source text.
    expect(kptfile.inventory?.inventoryID).toBe('1234');
    expect(kptfile.status?.conditions).toEqual([{ type: 'Ready', status: 'True' }]);
  });

  it('names the file and field of every problem', () => {
    const bad = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: x
  labelz: {}
upstream:
  type: oci
pipeline:
  mutators:
    - image: ok/one:v1
    - image: ok/two:v1
    - image: "not an image"
    - configPath: ../outside.yaml
    - image: a/b
      configPath: c.yaml
      configMap: {k: v}
  validators: {}
`;
    const err = (() => {
      try {
        parseKptfile(bad, 'pkgs/web/Kptfile');
      } catch (e) {
        return e as KptfileError;
      }
      throw new Error('expected an error');
    })();
    expect(err).toBeInstanceOf(KptfileError);
    expect(err.issues.map((i) => `${i.code} ${i.field}`)).toEqual([
      'unknown-field metadata.labelz',
      'invalid-value upstream.type',
      'wrong-type pipeline.validators',
    ]);
    expect(err.message).toContain(
      'pkgs/web/Kptfile: metadata.labelz: unknown field (expected one of name, namespace, labels, annotations)',
    );
    // Once the structure is right, kpt's rules run.
    const err2 = (() => {
      try {
        parseKptfile(
          bad.replace('  labelz: {}\n', '').replace('  type: oci\n', '  type: git\n').replace('  validators: {}\n', ''),
          'Kptfile',
        );
      } catch (e) {
        return e as KptfileError;
      }
      throw new Error('expected an error');
    })();
    expect(err2.message.split('\n')).toEqual([
      'Kptfile: pipeline.mutators[2].image: "not an image" is not a valid image reference (expected [registry[:port]/]name[:tag][@digest] with a lower-case name, e.g. ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2)',
      'Kptfile: pipeline.mutators[3].image: a function must name what to run: `image` (e.g. ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2) or `exec`',
      'Kptfile: pipeline.mutators[3].configPath: config path "../outside.yaml" must not refer to files outside the package',
      'Kptfile: pipeline.mutators[4]: a function may give only one of configPath, configMap (got configPath and configMap)',
    ]);
  });

  it('refuses other kinds and older Kptfile versions, and several documents', () => {
    expect(() => parseKptfile('apiVersion: kpt.dev/v1alpha2\nkind: Kptfile\n')).toThrow(
      /Kptfile: apiVersion: expected kpt.dev\/v1, got "kpt.dev\/v1alpha2" \(an older Kptfile/,
    );
    expect(() => parseKptfile('apiVersion: v1\nkind: ConfigMap\n')).toThrow('Kptfile: kind: expected Kptfile, got "ConfigMap"');
    // kpt's own examples were published as kpt.dev/v1alpha1 with fields v1 does not have: the
    // version is what the user must hear about, as kpt says it ("an old version of the Kptfile schema")
    const older = 'apiVersion: kpt.dev/v1alpha1\nkind: Kptfile\nmetadata:\n  name: hello\npackageMetadata:\n  shortDescription: example\n';
    expect(() => parseKptfile(older, 'pkg/Kptfile')).toThrow(
      /^pkg\/Kptfile: apiVersion: expected kpt.dev\/v1, got "kpt.dev\/v1alpha1" \(an older Kptfile: upgrade it with/,
    );
    expect(() => parseKptfile('apiVersion: kpt.dev/v1\nkind: Kptfile\n---\nkind: Kptfile\n')).toThrow(
      'a Kptfile holds one YAML document, found 2',
    );
    expect(decodeKptfile('- a\n').issues[0]?.message).toBe('a Kptfile must be a YAML map, got a list');
  });
});

describe('printKptfile', () => {
  it('returns the text byte for byte when nothing changed', () => {
    const parsed = parseKptfile(FULL);
    expect(printKptfile(parsed)).toBe(FULL);
    expect(printKptfile(parsed, structuredClone(parsed.kptfile))).toBe(FULL);
  });

  it('keeps comments, order and indentation around a change', () => {
    const parsed = parseKptfile(FULL);
    const next = structuredClone(parsed.kptfile);
    next.upstreamLock!.git!.commit = 'fedcba9876543210fedcba9876543210fedcba98';
    next.pipeline!.mutators!.unshift({
      image: 'ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4',
      configMap: { namespace: 'prod' },
    });
    const out = printKptfile(parsed, next);
    expect(out).toBe(
      FULL.replace('0123456789abcdef0123456789abcdef01234567', 'fedcba9876543210fedcba9876543210fedcba98').replace(
        '  mutators:\n',
        '  mutators:\n    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4\n      configMap:\n        namespace: prod\n',
      ),
    );
    expect(parseKptfile(out).kptfile).toEqual(next);
  });
});

describe('formatKptfile', () => {
  it("prints kpt's canonical shape: struct order, sorted maps, {} for an empty section", () => {
    const out = formatKptfile(
      {
        pipeline: {},
        metadata: { annotations: { b: '1', a: '2' }, name: 'x' },
        kind: 'Kptfile',
        apiVersion: 'kpt.dev/v1',
        info: { readinessGates: [{ conditionType: '' }] },
      },
      { sequenceIndent: 'compact' },
    );
    expect(out).toBe(
      'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\n  annotations:\n    a: "2"\n    b: "1"\ninfo:\n  readinessGates:\n  - conditionType: ""\npipeline: {}\n',
    );
  });
});

describe('pipeline keys', () => {
  it('strips tags and digests but not registry ports', () => {
    expect(imageWithoutTag('localhost:5000/fn:v1')).toBe('localhost:5000/fn');
    expect(imageWithoutTag('localhost:5000/fn')).toBe('localhost:5000/fn');
    expect(imageWithoutTag('gcr.io/kpt-fn/set-labels:v0.1@sha256:abc')).toBe('gcr.io/kpt-fn/set-labels');
    expect(imageWithoutTag('set-labels')).toBe('set-labels');
    expect(derivedFunctionKey({ exec: './run.sh', image: 'x:1' })).toBe('./run.sh');
  });

  it('picks name, derived or none as seed 000 says', () => {
    const kf = (...fns: object[]) => ({ pipeline: { mutators: fns } });
    expect(pipelineKeyMode([kf({ name: 'a', image: 'x' }), kf({ name: 'b', image: 'x' })])).toBe('name');
    expect(pipelineKeyMode([kf({ image: 'x:1' }), kf({ image: 'y:1' }, { exec: 'z' })])).toBe('derived');
    // Same image in two versions in one list: the key repeats.
    expect(pipelineKeyMode([kf({ image: 'x:1' }, { image: 'x:2' })])).toBe('none');
    // Ports do not make two images different keys by accident.
    expect(pipelineKeyMode([kf({ image: 'localhost:5000/a:v1' }, { image: 'localhost:5000/b:v1' })])).toBe('derived');
    expect(pipelineKeyMode([kf({ image: 'x:1', name: 'n' }), kf({ image: 'y:1' })])).toBe('none');
    expect(pipelineKeyMode([undefined, kf({ image: 'x:1' })])).toBe('derived');
  });
});

describe('.krmignore', () => {
  it('matches gitignore-style patterns', () => {
    const ig = parseKrmIgnore('# comment\ncharts/\n*.tmpl.yaml\n/root-only.yaml\n!keep.tmpl.yaml\ndocs/**/draft-*.yaml\n');
    expect(ig.ignores('charts/a/values.yaml')).toBe(true);
    expect(ig.ignores('x/y.tmpl.yaml')).toBe(true);
    expect(ig.ignores('keep.tmpl.yaml')).toBe(false);
    expect(ig.ignores('root-only.yaml')).toBe(true);
    expect(ig.ignores('sub/root-only.yaml')).toBe(false);
    expect(ig.ignores('docs/a/b/draft-1.yaml')).toBe(true);
    expect(ig.ignores('docs/draft-1.yaml')).toBe(true);
    expect(ig.ignores('service.yaml')).toBe(false);
    expect(ig.ignores('charts', false)).toBe(false);
  });
});

describe('package context', () => {
  it('builds the kptfile.kpt.dev ConfigMap and edits its data in place', () => {
    const cm = packageContextConfigMap('web', { region: 'eu' });
    expect(cm).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: web\n  region: eu\n',
    );
    const edited = editPackageContext(cm.replace('  region: eu\n', '  region: eu # from the variant\n  old: x\n'), {
      set: { zone: 'a' },
      remove: ['old'],
    });
    expect(edited).toContain('  region: eu # from the variant\n  zone: a\n');
    expect(edited).not.toContain('old');
    expect(editPackageContext(cm, { set: { region: 'eu' } })).toBe(cm);
  });
});

describe('addMergeComments', () => {
  it('handles every document of a file and keeps the rest byte for byte', () => {
    const input = `# header
apiVersion: v1
kind: Service
metadata:   # about the service
  name: web
  namespace: prod
  annotations:
    a: b # keep
spec: {}
---
apiVersion: v1
kind: ConfigMap
data: {}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  labels: {app: web}
`;
    expect(addMergeComments(input)).toBe(`# header
apiVersion: v1
kind: Service
metadata:   # kpt-merge: prod/web
  name: web
  namespace: prod
  annotations:
    a: b # keep
    internal.kpt.dev/upstream-identifier: '|Service|prod|web'
spec: {}
---
apiVersion: v1
kind: ConfigMap
data: {}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: # kpt-merge: /
  labels: {app: web}
  annotations:
    internal.kpt.dev/upstream-identifier: 'rbac.authorization.k8s.io|Role|default|'
`);
    // Idempotent.
    expect(addMergeComments(addMergeComments(input))).toBe(addMergeComments(input));
    expect(addMergeComments('key: [broken\n')).toBe('key: [broken\n');
  });
});
