import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { credentialsFor } from './auth.js';
import { isGitError } from './errors.js';
import { resolveRef } from './refs.js';
import { assertContentSource, credentialsAllowed, hostOf, parseRepositoryPattern, sourceTrust, trustNamed } from './trust.js';
import { repoLocation } from './url.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-trust-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const header = (token: string) => `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

describe('which repositories get credentials', () => {
  it('reads the host of https, ssh and scp-like URLs; none for local repositories', () => {
    expect(hostOf(repoLocation('https://Git.Example.com/o/r.git'))).toBe('git.example.com');
    expect(hostOf(repoLocation('https://127.0.0.1:8443/o/r'))).toBe('127.0.0.1:8443');
    expect(hostOf(repoLocation('ssh://git@host.example:2222/o/r'))).toBe('host.example:2222');
    expect(hostOf(repoLocation('git@host.example:o/r.git'))).toBe('host.example');
    expect(hostOf(repoLocation('/srv/git/r'))).toBeUndefined();
    expect(hostOf(repoLocation('file:///srv/git/r'))).toBeUndefined();
  });

  // [pattern as listed, repository content names, whether it gets credentials]
  const listed: readonly (readonly [string, string, boolean])[] = [
    // owner/repo and owner/*: on the GitHub server, over any transport, names without case
    ['org/catalog', 'https://github.com/org/catalog', true],
    ['org/catalog', 'https://github.com/ORG/Catalog.git/', true],
    ['org/catalog', 'git@github.com:org/catalog.git', true],
    ['org/catalog', 'https://github.com/org/catalog-private', false],
    ['org/catalog', 'https://github.com/org/catalog/extra', false],
    ['org/catalog', 'https://github.com/other/catalog', false],
    ['org/catalog', 'https://git.corp.example/org/catalog', false],
    ['org/*', 'https://github.com/Org/anything.git', true],
    ['org/*', 'https://github.com/org', false],
    ['org/*', 'https://github.com/organisation/x', false],
    // a host first: that host only, its path compared with case off GitHub
    ['git.corp.example/team/repo', 'https://git.corp.example/team/repo.git', true],
    ['git.corp.example/team/repo', 'https://git.corp.example/team/Repo', false],
    ['git.corp.example/team/*', 'https://git.corp.example/team/sub/repo', true],
    ['git.corp.example/team/*', 'https://git.corp.example/teams/repo', false],
    ['127.0.0.1:8443/private', 'https://127.0.0.1:8443/private.git', true],
    ['127.0.0.1:8443/private', 'https://127.0.0.1:9443/private.git', false],
    // a URL: its scheme and port too
    ['https://git.corp.example/team/repo.git', 'https://git.corp.example/team/repo', true],
    ['https://git.corp.example/team/repo.git', 'https://git.corp.example:443/team/repo', true],
    ['https://git.corp.example/team/repo.git', 'ssh://git@git.corp.example/team/repo', false],
    ['https://git.corp.example:8443/team/*', 'https://git.corp.example:8443/team/x', true],
    ['https://git.corp.example:8443/team/*', 'https://git.corp.example/team/x', false],
    ['git@git.corp.example:team/repo.git', 'ssh://git@git.corp.example/team/repo', true],
    // a whole host only when written as one
    ['mirror.example', 'https://mirror.example:8080/any/repo', true],
    ['mirror.example:8080', 'https://mirror.example/any/repo', false],
    ['https://mirror.example', 'https://mirror.example/any/repo', true],
    ['https://mirror.example/', 'http://mirror.example/any/repo', false],
    ['mirror.example/*', 'https://mirror.example/any/repo', true],
    ['mirror.example', 'https://mirror.example.attacker.example/any/repo', false],
    // a path that leaves its repository names none
    ['org/*', 'git@github.com:org/../secret', false],
  ];
  it.each(listed)('a listed %s covers %s: %s', (pattern, repo, allowed) => {
    const trust = sourceTrust({ repositories: [pattern], env: {} });
    expect(credentialsAllowed(trust, repoLocation(repo))).toBe(allowed);
  });

  // [repository the user named, repository content names, whether it gets credentials]
  const named: readonly (readonly [string, string, boolean])[] = [
    ['https://github.com/org/control', 'https://github.com/org/control.git', true],
    ['https://github.com/org/control.git', 'https://GitHub.com/Org/Control/', true],
    ['https://github.com/org/control', 'https://github.com/org/private-catalog', false],
    ['https://github.com/org/control', 'https://github.com/org/control/../private-catalog', false],
    ['https://github.com/org/control', 'git@github.com:org/control.git', false],
    ['https://git.corp.example/team/repo', 'https://git.corp.example/team/Repo', false],
    ['https://git.corp.example/team/repo', 'https://git.corp.example/team/other', false],
    ['https://127.0.0.1:8443/up.git', 'https://127.0.0.1:8443/up', true],
    ['https://127.0.0.1:8443/up.git', 'https://127.0.0.1:8443/private.git', false],
    ['https://127.0.0.1:8443/up.git', 'https://127.0.0.1:9443/up.git', false],
    ['ssh://git@host.example:2222/o/r.git', 'ssh://git@host.example:2222/o/r', true],
    ['git@host.example:o/r', 'ssh://host.example/o/r.git', true],
  ];
  it.each(named)('a named %s covers %s: %s', (repo, other, allowed) => {
    const trust = sourceTrust({ named: [repo], env: {} });
    expect(credentialsAllowed(trust, repoLocation(other))).toBe(allowed);
  });

  it('owner/repo names a repository of the GitHub server given, where names compare without case', () => {
    const trust = sourceTrust({ repositories: ['org/catalog'], env: { GITHUB_SERVER_URL: 'https://ghe.corp.example' } });
    const ok = (url: string) => credentialsAllowed(trust, repoLocation(url));
    expect(ok('https://ghe.corp.example/Org/Catalog')).toBe(true);
    expect(ok('https://github.com/org/catalog')).toBe(false);
    const named = sourceTrust({ named: ['https://ghe.corp.example/org/control'], githubServer: 'https://ghe.corp.example', env: {} });
    expect(credentialsAllowed(named, repoLocation('https://ghe.corp.example/ORG/control.git'))).toBe(true);
  });

  it('reads KDELTA_CREDENTIAL_REPOSITORIES, and KDELTA_CREDENTIAL_HOSTS by the same rules', () => {
    const trust = sourceTrust({
      env: { KDELTA_CREDENTIAL_REPOSITORIES: 'org/a, org/b\norg2/*', KDELTA_CREDENTIAL_HOSTS: 'mirror.example' },
    });
    const ok = (url: string) => credentialsAllowed(trust, repoLocation(url));
    expect(
      ['https://github.com/org/a', 'https://github.com/org/b', 'https://github.com/org2/z', 'https://mirror.example/x'].map(ok),
    ).toEqual([true, true, true, true]);
    expect(ok('https://github.com/org/c')).toBe(false);
  });

  // [what is listed, why it is refused]
  const invalid: readonly (readonly [string, RegExp])[] = [
    ['org/cat*', /"\*" that is not its last segment/],
    ['*/repo', /"\*" that is not its last segment/],
    ['org/a b', /not a repository pattern/],
    ['ftp://host/x', /scheme "ftp"/],
    ['host.example/../x', /"\." or "\.\." segment/],
    ['bad!host', /not a host/],
  ];
  it.each(invalid)('refuses %s, saying why', (entry, why) => {
    expect(parseRepositoryPattern(entry)).toMatch(why);
  });

  it('refuses a listed pattern that is not one, naming where it was listed', () => {
    const refusal = (() => {
      try {
        sourceTrust({ env: { KDELTA_CREDENTIAL_REPOSITORIES: 'org/a, org/cat*' } });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(isGitError(refusal) && refusal.code).toBe('invalid-pattern');
    expect(String((refusal as Error).message)).toMatch(
      /^KDELTA_CREDENTIAL_REPOSITORIES: "org\/cat\*" has a "\*" that is not its last segment/,
    );
  });

  it('sends no token to a repository content named and the user did not, on the same host as a named one, and resets git’s helpers and headers for it', () => {
    const trust = sourceTrust({ named: ['https://github.com/org/control'], env: {} });
    const env = { KDELTA_GIT_TOKEN: 'tok-123', GITHUB_TOKEN: 'gh-456' };
    const foreign = credentialsFor(repoLocation('https://github.com/org/private.git'), { env, trust, token: 'tok-123' });
    expect(Object.values(foreign.env).join('\n')).not.toContain('Authorization');
    expect(foreign.withheld).toBe(true);
    expect(foreign.env).toEqual({
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_0: 'credential.https://github.com/.helper',
      GIT_CONFIG_VALUE_0: '',
      GIT_CONFIG_KEY_1: 'http.https://github.com/.extraHeader',
      GIT_CONFIG_VALUE_1: '',
      GIT_CONFIG_KEY_2: 'http.https://github.com/org/private.git.extraHeader',
      GIT_CONFIG_VALUE_2: '',
    });
    expect(foreign.secrets).toEqual(expect.arrayContaining(['tok-123', 'gh-456']));
    const own = credentialsFor(repoLocation('https://github.com/org/control.git'), { env, trust });
    expect(own.env.GIT_CONFIG_VALUE_0).toBe(header('tok-123'));
    expect(own.withheld).toBeUndefined();
  });

  it('gives the run’s own token (tokenFor) to a named or listed repository, for every read, and never to another of its owner', () => {
    const tokenFor = (url: string) => (url.startsWith('https://github.com/') ? 'run-token' : undefined);
    const tokenName = () => 'the GitHub App 1’s installation token for org';
    const trust = trustNamed(
      sourceTrust({ named: ['https://github.com/org/control'], repositories: ['org/public-catalog'], tokenFor, tokenName, env: {} }),
      [],
    );
    const upstream = credentialsFor(repoLocation('https://github.com/org/public-catalog'), { env: {}, trust });
    expect(upstream.env.GIT_CONFIG_VALUE_0).toBe(header('run-token'));
    expect(upstream.secrets).toContain('run-token');
    // what a refusal will name (never the value)
    expect(upstream.env.KDELTA_SENT_CREDENTIALS).toBe('the GitHub App 1’s installation token for org');
    const other = credentialsFor(repoLocation('https://github.com/org/private-catalog'), { env: {}, trust });
    expect(Object.values(other.env).join('\n')).not.toContain('Authorization');
  });

  it('reaches an unnamed ssh repository with none of the user’s keys (no agent, no key file, no ssh configuration)', () => {
    const trust = sourceTrust({ named: ['git@github.com:org/control.git'], env: {} });
    const foreign = credentialsFor(repoLocation('git@github.com:org/private.git'), { env: {}, trust });
    expect(foreign.withheld).toBe(true);
    expect(foreign.env.GIT_SSH_COMMAND).toBe(
      'ssh -F /dev/null -o IdentityAgent=none -o IdentitiesOnly=yes -o IdentityFile=/dev/null -o BatchMode=yes',
    );
    const own = credentialsFor(repoLocation('ssh://git@github.com/org/control'), { env: {}, trust });
    expect(own.env.GIT_SSH_COMMAND).toBeUndefined();
  });

  it('gives an unnamed repository only the credentials written into the content’s own URL, never the user’s', () => {
    const trust = sourceTrust({ env: {} });
    const creds = credentialsFor(repoLocation('https://evil.example/r'), {
      env: {},
      trust,
      userCredentials: { username: 'me', password: 'mine' },
    });
    expect(Object.values(creds.env).join('\n')).not.toContain('Authorization');
    const own = credentialsFor(repoLocation('https://evil.example/r'), {
      env: {},
      trust,
      urlCredentials: { username: 'anon', password: 'public' },
    });
    expect(own.env.GIT_CONFIG_KEY_3).toBe('http.https://evil.example/r.extraHeader');
    expect(own.env.GIT_CONFIG_VALUE_3).toBe(`Authorization: Basic ${Buffer.from('anon:public').toString('base64')}`);
  });
});

describe('repositories on this machine named by package content', () => {
  it('are refused, naming the file that named them, unless the user named them or allowed local upstreams', () => {
    const trust = sourceTrust({ env: {} });
    const refusal = (() => {
      try {
        assertContentSource(repoLocation('/home/runner/checkout/secret'), trust, 'pkg/sub/Kptfile');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(isGitError(refusal) && refusal.code).toBe('refused-local');
    expect(String((refusal as Error).message)).toMatch(
      /^pkg\/sub\/Kptfile: upstream repository "\/home\/runner\/checkout\/secret" is on this machine/,
    );
    expect(() => assertContentSource(repoLocation('file:///home/runner/checkout/secret'), trust)).toThrow(/KDELTA_ALLOW_LOCAL_UPSTREAMS=1/);
    const named = trustNamed(trust, ['file:///srv/git/up.git/'], scratch);
    expect(() => assertContentSource(repoLocation('/srv/git/up.git'), named)).not.toThrow();
    expect(() => assertContentSource(repoLocation('/srv/git/other'), named)).toThrow(/refused/);
    const allowed = sourceTrust({ env: { KDELTA_ALLOW_LOCAL_UPSTREAMS: '1' } });
    expect(() => assertContentSource(repoLocation('/srv/git/other'), allowed)).not.toThrow();
    expect(() => assertContentSource(repoLocation('https://host/r'), trust)).not.toThrow();
  });

  it('name one repository with and without `.git`, as git opens `<path>.git` for `<path>` (kpt records it so)', () => {
    const bare = join(scratch, 'upstream.git');
    mkdirSync(bare, { recursive: true });
    const trust = sourceTrust({ named: [bare], env: {} });
    expect(() => assertContentSource(repoLocation(join(scratch, 'upstream')), trust)).not.toThrow();
    expect(() => assertContentSource(repoLocation(`file://${join(scratch, 'upstream')}/`), trust)).not.toThrow();
    expect(() => assertContentSource(repoLocation(join(scratch, 'upstream-other')), trust)).toThrow(/refused/);
    const stripped = sourceTrust({ named: [join(scratch, 'upstream')], env: {} });
    expect(() => assertContentSource(repoLocation(bare), stripped)).not.toThrow();
  });

  it('are refused before git runs', async () => {
    const trust = sourceTrust({ env: {} });
    await expect(resolveRef({ repo: join(scratch, 'nowhere'), ref: 'main', trust, namedBy: 'sub/Kptfile' })).rejects.toThrow(
      /^sub\/Kptfile: upstream repository ".*nowhere" is on this machine/,
    );
  });
});
