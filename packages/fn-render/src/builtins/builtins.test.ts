// biome-ignore-all lint/suspicious/noTemplateCurlyInString: kpt setter patterns are literal `${name}` text
/**
 * The built-in functions against the behaviour documented for their catalog counterparts
 * (GoogleContainerTools/kpt-functions-catalog). Each case names the example or README it is from;
 * the inputs and expected outputs are those of the catalog's example (its resources and its
 * `.expected/diff.patch`), rendered here through a Kptfile pipeline as `kpt fn render` would.
 */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { PackageTree } from '@kdelta/kptfile-model';
import { renderPackage } from '../index.js';
import { builtinName } from './index.js';

const kptfile = (fn: string) => `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: example\npipeline:\n  mutators:\n${fn}`;

async function render(fn: string, files: Record<string, string>): Promise<Record<string, string>> {
  const tree = PackageTree.fromFiles([['Kptfile', kptfile(fn)], ...Object.entries(files)]);
  const out = await renderPackage(tree, { runtime: 'builtin' });
  if (!out.ok) throw new Error(out.error.message);
  return Object.fromEntries(Object.keys(files).map((f) => [f, out.tree.text(f) ?? '(deleted)']));
}

async function renderError(fn: string, files: Record<string, string>): Promise<string> {
  const out = await renderPackage(PackageTree.fromFiles([['Kptfile', kptfile(fn)], ...Object.entries(files)]), { runtime: 'builtin' });
  if (out.ok) throw new Error('expected the render to fail');
  return out.error.message;
}

describe('built-in selection by image', () => {
  it('matches catalog images by name whatever the tag or digest, and nothing else', () => {
    expect(builtinName('gcr.io/kpt-fn/set-namespace:v0.4.1')).toBe('set-namespace');
    expect(builtinName('ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2')).toBe('set-labels');
    expect(builtinName('gcr.io/kpt-fn/apply-setters@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef')).toBe(
      'apply-setters',
    );
    expect(builtinName('docker.io/someone/set-namespace:v1')).toBeUndefined();
    expect(builtinName('gcr.io/kpt-fn/starlark:v0.4')).toBeUndefined();
  });
});

describe('set-namespace (catalog v0.4)', () => {
  // examples/set-namespace-simple: resources.yaml and .expected/diff.patch
  const resources = `apiVersion: v1
kind: Service
metadata:
  name: the-service
  namespace: example
---
apiVersion: v1
kind: Namespace
metadata:
  name: example
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: the-crd
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          name: crd-svc
          namespace: example
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: the-api-service
spec:
  service:
    name: api-svc
    namespace: example
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb1
subjects:
  - kind: ServiceAccount
    name: default
    namespace: example
`;
  it('examples/set-namespace-simple: every reference to the namespace becomes example-ns', async () => {
    const out = await render('    - image: gcr.io/kpt-fn/set-namespace:v0.4.0\n      configMap:\n        namespace: example-ns\n', {
      'resources.yaml': resources,
    });
    expect(out['resources.yaml']).toBe(
      resources.replaceAll('namespace: example\n', 'namespace: example-ns\n').replace('  name: example\n', '  name: example-ns\n'),
    );
  });

  it('README: depends-on annotations are updated only for resources declared in the package; local-config is skipped', async () => {
    const out = await render('    - image: gcr.io/kpt-fn/set-namespace:v0.4\n      configMap:\n        namespace: prod\n', {
      'r.yaml': `apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
  namespace: example
  annotations:
    config.kubernetes.io/depends-on: /namespaces/example/ServiceAccount/foo
---
kind: RoleBinding
apiVersion: rbac.authorization.k8s.io/v1
metadata:
  name: rb
  namespace: example
  annotations:
    config.kubernetes.io/depends-on: /namespaces/example/ServiceAccount/sa
subjects:
  - kind: ServiceAccount
    name: default
    namespace: example
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  namespace: elsewhere
  annotations:
    config.kubernetes.io/local-config: "true"
`,
    });
    const docs = parseAllDocuments(out['r.yaml'] as string).map((d) => d.toJS());
    expect(docs[0].metadata).toEqual({
      name: 'sa',
      namespace: 'prod',
      annotations: { 'config.kubernetes.io/depends-on': '/namespaces/example/ServiceAccount/foo' },
    });
    expect(docs[1].metadata.annotations['config.kubernetes.io/depends-on']).toBe('/namespaces/prod/ServiceAccount/sa');
    expect(docs[1].subjects[0].namespace).toBe('prod');
    expect(docs[2].metadata.namespace).toBe('elsewhere');
  });

  it('README: with the package context ConfigMap (kptfile.kpt.dev) the namespace is its data.name', async () => {
    const out = await render('    - image: gcr.io/kpt-fn/set-namespace:v0.4\n      configPath: package-context.yaml\n', {
      'package-context.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: my-variant\n',
      'svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: old\n',
    });
    expect(out['svc.yaml']).toBe('apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: my-variant\n');
  });

  it('namespace.go: resources under different namespaces with no Namespace object are an error result', async () => {
    const msg = await renderError('    - image: gcr.io/kpt-fn/set-namespace:v0.4\n      configMap:\n        namespace: x\n', {
      'r.yaml':
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: one\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n  namespace: two\n',
    });
    expect(msg).toContain(
      'all input namespace-scoped resources should be under the same namespace but found different namespaces: one,two',
    );
  });
});

describe('set-labels (catalog v0.2)', () => {
  it('examples/set-labels/simple: labels added after the existing metadata fields', async () => {
    const out = await render(
      '    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configMap:\n        color: orange\n        fruit: apple\n',
      {
        'resources.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
data:
  some-key: some-value
---
apiVersion: dev.example.com/v1
kind: MyResource
metadata:
  name: the-service
  namespace: the-namespace
spec:
  selector:
    labels:
      foo: bar
`,
      },
    );
    expect(out['resources.yaml']).toBe(`apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
  labels:
    color: orange
    fruit: apple
data:
  some-key: some-value
---
apiVersion: dev.example.com/v1
kind: MyResource
metadata:
  name: the-service
  namespace: the-namespace
  labels:
    color: orange
    fruit: apple
spec:
  selector:
    labels:
      foo: bar
`);
  });

  it('README: selectors that target the labels are updated too (kustomize commonLabels)', async () => {
    const out = await render('    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configMap:\n        app: web\n', {
      'r.yaml': `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    tier: front
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: c
          image: nginx
`,
    });
    const [svc, dep] = parseAllDocuments(out['r.yaml'] as string).map((d) => d.toJS());
    expect(svc.spec.selector).toEqual({ tier: 'front', app: 'web' });
    expect(dep.spec.selector.matchLabels).toEqual({ app: 'web' });
    expect(dep.spec.template.metadata.labels).toEqual({ app: 'web' });
    expect(dep.metadata.labels).toEqual({ app: 'web' });
  });
});

describe('set-annotations (catalog v0.1)', () => {
  it('README: annotations added to every resource and to pod templates', async () => {
    const out = await render(
      '    - image: gcr.io/kpt-fn/set-annotations:v0.1\n      configMap:\n        color: orange\n        fruit: apple\n',
      {
        'r.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: the-map\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    metadata:\n      labels:\n        a: b\n',
      },
    );
    const [cm, dep] = parseAllDocuments(out['r.yaml'] as string).map((d) => d.toJS());
    expect(cm.metadata.annotations).toEqual({ color: 'orange', fruit: 'apple' });
    expect(dep.metadata.annotations).toEqual({ color: 'orange', fruit: 'apple' });
    expect(dep.spec.template.metadata.annotations).toEqual({ color: 'orange', fruit: 'apple' });
  });
});

describe('apply-setters (catalog v0.2)', () => {
  it('README "Setting scalar values": patterns with setters, comments kept', async () => {
    const out = await render(
      '    - image: gcr.io/kpt-fn/apply-setters:v0.2\n      configMap:\n        image: ubuntu\n        replicas: "3"\n',
      {
        'd.yaml':
          'apiVersion: v1\nkind: Deployment\nmetadata:\n  name: nginx-deployment # kpt-set: ${image}-deployment\nspec:\n  replicas: 1 # kpt-set: ${replicas}\n',
      },
    );
    expect(out['d.yaml']).toBe(
      'apiVersion: v1\nkind: Deployment\nmetadata:\n  name: ubuntu-deployment # kpt-set: ${image}-deployment\nspec:\n  replicas: 3 # kpt-set: ${replicas}\n',
    );
  });

  it('README "Setting array values": a list setter takes the value read as a list', async () => {
    const out = await render(
      '    - image: gcr.io/kpt-fn/apply-setters:v0.2\n      configMap:\n        env: |\n          - prod\n          - dev\n',
      {
        'k.yaml': 'apiVersion: v1\nkind: MyKind\nmetadata:\n  name: foo\nenvironments: # kpt-set: ${env}\n  - dev\n  - stage\n',
      },
    );
    expect(out['k.yaml']).toBe(
      'apiVersion: v1\nkind: MyKind\nmetadata:\n  name: foo\nenvironments: # kpt-set: ${env}\n  - prod\n  - dev\n',
    );
  });

  it('a pattern naming a setter without a value leaves the field alone', async () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  host: a.example.com # kpt-set: ${sub}.${domain}\n';
    const out = await render('    - image: gcr.io/kpt-fn/apply-setters:v0.2\n      configMap:\n        sub: b\n', { 'c.yaml': text });
    expect(out['c.yaml']).toBe(text);
  });
});

describe('search-replace (catalog v0.2)', () => {
  const fn = (data: Record<string, string>) =>
    `    - image: gcr.io/kpt-fn/search-replace:v0.2\n      configMap:\n${Object.entries(data)
      .map(([k, v]) => `        ${k}: ${JSON.stringify(v)}\n`)
      .join('')}`;
  const deployment =
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: my-project-id-foo\n  namespace: bookstore\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: c\n          ports:\n            - containerPort: 80\n';

  it('README: by-path with by-value, and `**` arbitrarily deep', async () => {
    const out = await render(fn({ 'by-path': 'spec.**.containerPort', 'by-value': '80', 'put-value': '8080' }), { 'd.yaml': deployment });
    expect(out['d.yaml']).toBe(deployment.replace('containerPort: 80', 'containerPort: 8080'));
    const ns = await render(fn({ 'by-path': 'metadata.namespace', 'by-value': 'bookstore', 'put-value': 'library' }), {
      'd.yaml': deployment,
    });
    expect(ns['d.yaml']).toBe(deployment.replace('namespace: bookstore', 'namespace: library'));
  });

  it('README: by-value-regex with numbered capture groups in put-value', async () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: something-foo\n  namespace: something-bar\n';
    const out = await render(fn({ 'by-value-regex': 'something-(.*)', 'put-value': 'my-project-id-${1}' }), { 'c.yaml': text });
    expect(out['c.yaml']).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: my-project-id-foo\n  namespace: my-project-id-bar\n');
  });

  it('README: put-comment sets the setter pattern as a line comment', async () => {
    const out = await render(fn({ 'by-value': 'my-project-id-foo', 'put-comment': 'kpt-set: ${project-id}-foo' }), {
      'd.yaml': deployment,
    });
    expect(out['d.yaml']).toContain('  name: my-project-id-foo # kpt-set: ${project-id}-foo\n');
  });

  it('README: by-path metadata.namespace with put-value sets it even where it is missing', async () => {
    const out = await render(fn({ 'by-path': 'metadata.namespace', 'put-value': 'bookstore' }), {
      'c.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n',
    });
    expect(out['c.yaml']).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: bookstore\n');
  });

  it('README path expressions: a.b[1].c and a.b[*].c', async () => {
    const text = 'apiVersion: v1\nkind: X\nmetadata:\n  name: x\na:\n  b:\n    - c: thing0\n    - c: thing1\n    - c: thing2\n';
    const one = await render(fn({ 'by-path': 'a.b[1].c', 'put-value': 'hit' }), { 'x.yaml': text });
    expect(one['x.yaml']).toBe(text.replace('c: thing1', 'c: hit'));
    const all = await render(fn({ 'by-path': 'a.b[*].c', 'put-value': 'hit' }), { 'x.yaml': text });
    expect(all['x.yaml']).toBe(text.replace(/thing\d/g, 'hit'));
  });
});

describe('set-image (catalog v0.1)', () => {
  it('examples/set-image-simple: nginx becomes bitnami/nginx:1.21.4 in every container, other images kept', async () => {
    const resources = `apiVersion: v1
kind: Pod
metadata:
  name: the-pod
spec:
  containers:
  - name: server
    image: nginx:1.20.2
  - name: store
    image: postgres:14.1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: the-deployment
spec:
  template:
    spec:
      containers:
      - name: store
        image: redis:6.2.6
      - name: server
        image: nginx:1.20.2
`;
    const out = await render(
      '    - image: gcr.io/kpt-fn/set-image:v0.1\n      configMap:\n        name: nginx\n        newName: bitnami/nginx\n        newTag: 1.21.4\n',
      {
        'resources.yaml': resources,
      },
    );
    expect(out['resources.yaml']).toBe(resources.replaceAll('image: nginx:1.20.2', 'image: bitnami/nginx:1.21.4'));
  });

  it('README: a digest replaces the tag; newTag with digest is an error', async () => {
    const digest = 'sha256:3cbbd11b65aab276c8578c039d0c21d0ffb7a496e09c0f632bac1a1b2c115256';
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  initContainers:\n    - name: i\n      image: nginx:1.0\n';
    const out = await render(
      `    - image: gcr.io/kpt-fn/set-image:v0.1\n      configMap:\n        name: nginx\n        newName: nginx\n        digest: ${digest}\n`,
      { 'p.yaml': pod },
    );
    expect(out['p.yaml']).toBe(pod.replace('nginx:1.0', `nginx@${digest}`));
    const msg = await renderError(
      `    - image: gcr.io/kpt-fn/set-image:v0.1\n      configMap:\n        name: nginx\n        newTag: "2"\n        digest: ${digest}\n`,
      { 'p.yaml': pod },
    );
    expect(msg).toContain('`newTag` and `digest` cannot both be set');
  });
});

describe('apply-replacements (catalog v0.1)', () => {
  it('examples/apply-replacements-simple: the Pod spec is copied into the Job, fields created', async () => {
    const out = await render('    - image: gcr.io/kpt-fn/apply-replacements:v0.1\n      configPath: replacements.yaml\n', {
      'replacements.yaml':
        'apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: replacements-fn-config\n  annotations:\n    config.kubernetes.io/local-config: "true"\nreplacements:\n  - source:\n      kind: Pod\n      name: my-pod\n      fieldPath: spec\n    targets:\n      - select:\n          name: hello\n          kind: Job\n        fieldPaths:\n          - spec.template.spec\n        options:\n          create: true\n',
      'resources.yaml':
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: my-pod\nspec:\n  containers:\n  - image: busybox\n    name: myapp-container\n  restartPolicy: OnFailure\n',
      'job.yaml': 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hello\n',
    });
    expect(out['job.yaml']).toBe(
      'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n      containers:\n      - image: busybox\n        name: myapp-container\n      restartPolicy: OnFailure\n',
    );
  });

  it('kustomize replacements docs: a delimited part of a value, into a list element chosen by name', async () => {
    const out = await render('    - image: gcr.io/kpt-fn/apply-replacements:v0.1\n      configPath: r.yaml\n', {
      'r.yaml':
        'apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: r\nreplacements:\n  - source:\n      kind: ConfigMap\n      name: settings\n      fieldPath: data.image\n      options:\n        delimiter: ":"\n        index: 1\n    targets:\n      - select:\n          kind: Deployment\n        fieldPaths:\n          - spec.template.spec.containers.[name=app].image\n        options:\n          delimiter: ":"\n          index: 1\n',
      'c.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  image: nginx:1.25\n',
      'd.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: nginx:1.19\n        - name: side\n          image: busybox:1.0\n',
    });
    expect(out['d.yaml']).toContain('image: nginx:1.25\n');
    expect(out['d.yaml']).toContain('image: busybox:1.0\n');
  });

  it('a source that selects nothing is an error', async () => {
    const msg = await renderError('    - image: gcr.io/kpt-fn/apply-replacements:v0.1\n      configPath: r.yaml\n', {
      'r.yaml':
        'apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: r\nreplacements:\n  - source:\n      kind: Secret\n    targets: []\n',
    });
    expect(msg).toContain('nothing selected by source');
  });
});
