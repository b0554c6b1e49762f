import { KdeltaError } from '@kdelta/errors';
import { describe, expect, it } from 'vitest';
import { BAD_SETTINGS, GOOD_SETTINGS } from '@kdelta/test-support';
import { NO_SETTINGS, settingOptions } from '@kdelta/run';
import { InputError, secretInputs, settingsFromInputs } from './inputs.js';

const ctx = { workspace: '/runner/ws/fleet', env: { HOME: '/runner/home' } };
const reader =
  (inputs: Record<string, string>) =>
  (name: string): string =>
    inputs[name] ?? '';

const at = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined), value);

function error(inputs: Record<string, string>): InputError {
  try {
    settingsFromInputs(reader(inputs), ctx);
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('no InputError');
}

describe('settingsFromInputs', () => {
  it('defaults: github forge with the token, config .kdelta, run settings left to the control resources', () => {
    const s = settingsFromInputs(reader({ token: 'ghs_x' }), ctx);
    expect(s.forge).toBe('github');
    expect(s.config).toBe('.kdelta');
    // a blank input is unset: RunSettings, else the run's default, decides (labels, draft, signed commits…)
    expect(s.options).toEqual({
      cwd: '/runner/ws/fleet',
      config: '.kdelta',
      forge: 'github',
      settings: NO_SETTINGS,
      env: ctx.env,
      github: { token: 'ghs_x', tokenName: 'the `token` input' },
      dashboard: {},
    });
  });

  it("the dashboard is kept by default, as an issue of the workflow's repository; dashboard false turns it off", () => {
    const env = { ...ctx.env, GITHUB_REPOSITORY: 'org/fleet' };
    expect(settingsFromInputs(reader({ token: 't' }), { ...ctx, env }).options.dashboard).toEqual({ repository: 'org/fleet' });
    expect(settingsFromInputs(reader({ token: 't', dashboard: 'true' }), { ...ctx, env }).options.dashboard).toEqual({
      repository: 'org/fleet',
    });
    expect(settingsFromInputs(reader({ token: 't', dashboard: 'false' }), { ...ctx, env }).options.dashboard).toBe(false);
    expect(error({ token: 't', dashboard: 'off' }).message).toBe('input "dashboard": expected true or false (got "off")');
  });

  it('every input reaches its option', () => {
    const s = settingsFromInputs(
      reader({
        token: 'ghs_x',
        config: 'fleet/.kdelta',
        mode: 'variants',
        'dry-run': 'TRUE',
        shard: '2/5',
        concurrency: '8',
        budget: '120',
        labels: 'kdelta, dependencies',
        assignees: 'alice\nbob\n',
        reviewers: 'carol',
        'team-reviewers': 'platform',
        draft: 'always',
        'auto-merge': 'squash',
        'commit-author-name': 'Fleet Bot',
        'commit-author-email': 'fleet@example.com',
        'branch-prefix': 'fleet/',
        'signed-commits': 'true',
        'allow-exec': 'true',
        'allow-local-upstreams': 'true',
        'credential-hosts': 'git.corp.example, mirror.example:8443',
        'credential-repositories': 'org/catalog\norg2/*',
      }),
      ctx,
    );
    expect(s.options).toMatchObject({ config: 'fleet/.kdelta', github: { token: 'ghs_x' } });
    // the run settings, checked here once, reach run() as they are
    expect(settingOptions(s.options.settings)).toMatchObject({
      mode: 'variants',
      dryRun: true,
      allowExec: true,
      allowLocalUpstreams: true,
      credentialHosts: ['git.corp.example', 'mirror.example:8443'],
      credentialRepositories: ['org/catalog', 'org2/*'],
      shard: { index: 2, count: 5 },
      concurrency: 8,
      budget: 120,
      author: { name: 'Fleet Bot', email: 'fleet@example.com' },
      branchPrefix: 'fleet/',
      github: {
        labels: ['kdelta', 'dependencies'],
        assignees: ['alice', 'bob'],
        reviewers: ['carol'],
        teamReviewers: ['platform'],
        draft: 'always',
        autoMerge: 'squash',
        signedCommits: true,
      },
    });
  });

  it("GitHub's endpoints come from the runner's environment (an Enterprise Server's too)", () => {
    const env = {
      GITHUB_API_URL: 'https://ghe.example.com/api/v3',
      GITHUB_SERVER_URL: 'https://ghe.example.com',
      GITHUB_GRAPHQL_URL: 'https://ghe.example.com/api/graphql',
    };
    expect(settingsFromInputs(reader({ token: 't' }), { ...ctx, env }).options.github).toMatchObject({
      apiUrl: 'https://ghe.example.com/api/v3',
      serverUrl: 'https://ghe.example.com',
      graphqlUrl: 'https://ghe.example.com/api/graphql',
    });
  });

  it('forge local needs no token and has no github options; auto-merge false is off', () => {
    const s = settingsFromInputs(reader({ forge: 'local', 'auto-merge': 'false' }), ctx);
    expect(s.options.forge).toBe('local');
    expect(s.options.github).toBeUndefined();
    expect(settingsFromInputs(reader({ token: 't', 'auto-merge': 'false' }), ctx).options.settings.values.autoMerge).toBe(false);
  });

  it('each bad input is refused by name, with what was expected', () => {
    expect(error({ forge: 'gitlab' }).message).toBe('input "forge": must be one of local, github (got "gitlab")');
    expect(error({ forge: 'local', shard: 'two' }).input).toBe('shard');
    expect(error({ forge: 'local', 'dry-run': 'yes' }).message).toBe('input "dry-run": expected true or false (got "yes")');
    expect(error({ forge: 'local', 'commit-author-name': 'Bot' }).input).toBe('commit-author-email');
    expect(error({ forge: 'local', 'commit-author-name': 'Bot', 'commit-author-email': 'not an email' }).input).toBe('commit-author-email');
    expect(error({ forge: 'local', config: '../elsewhere' }).message).toContain('input "config": must be inside the workspace');
    expect(error({ forge: 'github' }).message).toContain('input "token": the github forge needs a token');
  });

  it('every bad input is named at once', () => {
    expect(error({ forge: 'local', concurrency: '0', draft: 'sometimes' }).message).toBe(
      'input "concurrency": must be an integer from 1 to 64 (got 0)\ninput "draft": must be one of always, never, conflicts (got "sometimes")',
    );
  });

  // The table the CLI's flags and RunSettings are tested against too: the three agree.
  it.each(BAD_SETTINGS.filter((c) => c.input !== undefined))(
    'input $input: "$text" is refused as the flag and RunSettings refuse it',
    (c) => {
      const bad = error({ forge: 'local', [c.input!]: c.text });
      expect(bad.input).toBe(c.input);
      expect(bad.message).toBe(`input "${c.input}": ${c.problem}`);
    },
  );

  it.each(GOOD_SETTINGS.filter((c) => c.input !== undefined))(
    'input $input: "$text" is accepted as the flag and RunSettings accept it',
    (c) => {
      const s = settingsFromInputs(reader({ token: 't', [c.input!]: c.text }), ctx);
      expect(at(settingOptions(s.options.settings), c.option)).toEqual(c.value);
    },
  );

  it('a bad input is a KdeltaError with a stable code, like every error of kdelta', () => {
    const bad = error({ forge: 'local', shard: 'two' });
    expect(bad).toBeInstanceOf(KdeltaError);
    expect(bad.code).toBe('invalid-input');
  });
});

describe('GitHub App inputs', () => {
  const key = '-----BEGIN RSA PRIVATE KEY-----\nMIIfake\n-----END RSA PRIVATE KEY-----';
  it('app-id (or client-id) and private-key authenticate as the App; the token input is named in refusals', () => {
    const s = settingsFromInputs(reader({ token: 'ghs_x', 'app-id': '4242', 'private-key': key }), ctx);
    expect(s.options.github).toMatchObject({ app: { appId: '4242', privateKey: `${key}\n` }, tokenName: 'the `token` input' });
    const c = settingsFromInputs(reader({ 'client-id': 'Iv23liAbc', 'private-key': key }), ctx);
    expect(c.options.github?.app).toEqual({ clientId: 'Iv23liAbc', privateKey: `${key}\n` });
    expect(settingsFromInputs(reader({ token: 'ghs_x' }), ctx).options.github?.app).toBeUndefined();
  });

  it('an incomplete App is refused by input name', () => {
    expect(error({ token: 't', 'private-key': key }).message).toBe(
      'input "private-key": a GitHub App private key needs app-id or client-id',
    );
    expect(error({ token: 't', 'app-id': '4242' }).message).toMatch(/^input "private-key": expected the App's private key in PEM/);
    expect(error({ token: 't', 'app-id': 'Iv23li', 'private-key': key }).message).toMatch(/^input "app-id": expected the App's numeric id/);
    expect(error({ token: 't', 'app-id': '1', 'client-id': 'Iv', 'private-key': key }).message).toBe(
      'input "client-id": give app-id or client-id, not both',
    );
  });
});

describe('server-tokens', () => {
  const serverTokens = 'https://ghes.example.com=ghes-1\nhttps://git.example.org:8443=org-2\n';

  it('reads one <server>=<token> a line into the run, each token for its server', () => {
    const s = settingsFromInputs(reader({ token: 't', 'server-tokens': serverTokens }), ctx);
    expect(settingOptions(s.options.settings).serverTokens).toEqual([
      { server: 'https://ghes.example.com', token: 'ghes-1' },
      { server: 'https://git.example.org:8443', token: 'org-2' },
    ]);
  });

  it.each([
    [
      'https://ghes.example.com=ghes-1\n\nhttps://git.example.org=',
      'line 3 gives "https://git.example.org" an empty token (is its secret set in this repository?)',
    ],
    ['https://ghes.example.com=ghes-1\nghes-2', 'line 2 is not <server>=<token> (https://ghes.example.com=<token>): it has no "="'],
    [
      'http://ghes.example.com=ghes-1',
      'line 1 has the server "http://ghes.example.com", which is not https: a token travels over https only',
    ],
  ])('refuses %j naming the input and the line, and never printing a token', (text, problem) => {
    const bad = error({ token: 't', 'server-tokens': text });
    expect(bad.input).toBe('server-tokens');
    expect(bad.message).toBe(`input "server-tokens": ${problem}`);
    expect(bad.message).not.toMatch(/ghes-\d/);
  });

  it('masks every token, the token input’s and the private key’s, even on a line that does not parse', () => {
    const key = '-----BEGIN RSA PRIVATE KEY-----\nkey-line-1\nkey-line-2\n-----END RSA PRIVATE KEY-----';
    const inputs = { token: 'gh-1', 'comment-token': 'c-1', 'private-key': key, 'server-tokens': `${serverTokens}ghes.example.com=bad-3` };
    expect(secretInputs(reader(inputs))).toEqual(['gh-1', 'c-1', 'key-line-1', 'key-line-2', 'ghes-1', 'org-2', 'bad-3']);
  });
});
