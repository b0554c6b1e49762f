// Synthetic, realistic packages for the merge benchmark: apps of a Deployment, a Service and a
// ConfigMap (60-120 lines each), with upstream image bumps, new env vars, ports and containers,
// added and deleted resources, and local replica, label and env edits.

function deployment(i, { image = 'v1', extraEnv = false, extraPort = false, sidecar = false, replicas = 2, team, envValue = 'info' }) {
  const env = [
    ['LOG_LEVEL', envValue],
    ['REGION', 'eu-west-1'],
    ['FEATURE_FLAGS', 'a,b,c'],
    ['CACHE_TTL', '300'],
    ['DB_HOST', `db-${i}.internal`],
    ...(extraEnv ? [['TRACING', 'enabled']] : []),
  ];
  const ports = [['http', 8080], ['metrics', 9090], ...(extraPort ? [['grpc', 8443]] : [])];
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-${i}
  labels:
    app: app-${i}
    tier: backend${team ? `\n    team: ${team}` : ''}
  annotations:
    description: "Service number ${i} of the fleet"
spec:
  replicas: ${replicas} # tuned per environment
  selector:
    matchLabels:
      app: app-${i}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  template:
    metadata:
      labels:
        app: app-${i}
    spec:
      serviceAccountName: app-${i}
      containers:
      - name: app
        image: registry.example.com/app-${i}:${image}
        args: ["--port", "8080", "--metrics-port", "9090"]
        env:
${env.map(([n, v]) => `        - name: ${n}\n          value: "${v}"`).join('\n')}
        ports:
${ports.map(([n, p]) => `        - name: ${n}\n          containerPort: ${p}\n          protocol: TCP`).join('\n')}
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
          limits:
            cpu: "1"
            memory: 512Mi
        readinessProbe:
          httpGet:
            path: /healthz
            port: http
          periodSeconds: 10
        volumeMounts:
        - name: config
          mountPath: /etc/app
          readOnly: true${
            sidecar
              ? `
      - name: proxy
        image: registry.example.com/proxy:${image}
        ports:
        - containerPort: 15001
          protocol: TCP`
              : ''
          }
      volumes:
      - name: config
        configMap:
          name: app-${i}-config
`;
}

function service(i) {
  return `apiVersion: v1
kind: Service
metadata:
  name: app-${i}
  labels:
    app: app-${i}
  annotations:
    prometheus.io/scrape: "true"
    prometheus.io/port: "9090"
spec:
  type: ClusterIP
  selector:
    app: app-${i}
  ports:
${Array.from({ length: 12 }, (_, p) => `  - name: port-${p}\n    port: ${8000 + p}\n    targetPort: ${9000 + p}\n    protocol: TCP`).join('\n')}
`;
}

function configMap(i, suffix = 'config', version = 1) {
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-${i}-${suffix}
  labels:
    app: app-${i}
data:
${Array.from({ length: 55 }, (_, k) => `  setting_${k}: "value-${k}-v${k % 7 === 0 ? version : 1}"`).join('\n')}
`;
}

/**
 * Three versions of a package of about `resources` resources, as SourceFile lists. Upstream
 * changes every `upstreamChangeEvery`-th app (1: all of them, the merge's worst case).
 */
export function syntheticPackage(resources, { upstreamChangeEvery = 1 } = {}) {
  const apps = Math.max(1, Math.round(resources / 3));
  const origin = [];
  const upstream = [];
  const local = [];
  for (let i = 0; i < apps; i++) {
    const path = `apps/app-${i}.yaml`;
    const deletedUpstream = i % 100 === 7;
    const o = [deployment(i, {}), service(i), configMap(i)].join('---\n');
    const u =
      i % upstreamChangeEvery !== 0
        ? o
        : [
            deployment(i, { image: 'v2', extraEnv: i % 3 === 0, extraPort: i % 5 === 0, sidecar: i % 10 === 0 }),
            service(i),
            configMap(i, 'config', 2),
            ...(i % 100 === 3 ? [configMap(i, 'extra')] : []),
          ].join('---\n');
    const l = [
      deployment(i, {
        replicas: i % 2 === 0 ? 5 : 2,
        team: i % 3 === 0 ? 'payments' : undefined,
        envValue: i % 4 === 0 ? 'debug' : 'info',
      }),
      service(i),
      configMap(i),
    ].join('---\n');
    origin.push({ path, text: o });
    if (!deletedUpstream) upstream.push({ path, text: u });
    local.push({ path, text: l });
  }
  return { origin, upstream, local };
}

/**
 * One ConfigMap of `keys` keys (about 1 MB at 40,000): upstream changes every tenth value, adds a
 * key every twentieth and deletes every 97th; local changes every fifteenth, adds every fiftieth
 * and deletes every 89th.
 */
export function bigConfigMap(keys) {
  const text = (keep, edit, extra) => {
    const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: big', 'data:'];
    for (let i = 0; i < keys; i++) {
      const key = `key-${String(i).padStart(6, '0')}`;
      if (keep(i)) lines.push(`  ${key}: "value ${i}${edit(i)}"`);
      if (extra(i)) lines.push(`  ${key}-new: "added ${i}"`);
    }
    return `${lines.join('\n')}\n`;
  };
  const file = (t) => [{ path: 'big.yaml', text: t }];
  return {
    origin: file(
      text(
        () => true,
        () => '',
        () => false,
      ),
    ),
    upstream: file(
      text(
        (i) => i % 97 !== 0,
        (i) => (i % 10 === 0 ? ' upstream' : ''),
        (i) => i % 20 === 5,
      ),
    ),
    local: file(
      text(
        (i) => i % 89 !== 0,
        (i) => (i % 15 === 0 ? ' local' : ''),
        (i) => i % 50 === 7,
      ),
    ),
  };
}

/**
 * The same package as one multi-document file per side, each resource's `metadata:` carrying the
 * `# kpt-merge:` comment `kpt pkg get` writes: the shape of a rendered or generated package.
 */
export function oneStream(pkg) {
  const mark = (doc) => {
    const name = /\n {2}name: (\S+)/.exec(doc)[1];
    return doc.replace(/^metadata:$/m, `metadata: # kpt-merge: /${name}`);
  };
  const join = (files) => [{ path: 'package.yaml', text: files.map((f) => f.text.split('---\n').map(mark).join('---\n')).join('---\n') }];
  return { origin: join(pkg.origin), upstream: join(pkg.upstream), local: join(pkg.local) };
}
