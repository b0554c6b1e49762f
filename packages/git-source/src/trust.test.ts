import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { credentialsFor } from './auth.js';
import { isGitError } from './errors.js';
import { resolveRef } from './refs.js';
import { assertContentSource, credentialsAllowed, hostOf, sourceTrust, trustNamed } from './trust.js';
import { repoLocation } from './url.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'kdelta-trust-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const header = (token: string) => `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

describe('which hosts get credentials', () => {
  it('reads the host of https, ssh and scp-like URLs; none for local repositories', () => {
    expect(hostOf(repoLocation('https://Git.Example.com/o/r.git'))).toBe('git.example.com');
    expect(hostOf(repoLocation('https://127.0.0.1:8443/o/r'))).toBe('127.0.0.1:8443');
    expect(hostOf(repoLocation('ssh://git@host.example:2222/o/r'))).toBe('host.example:2222');
    expect(hostOf(repoLocation('git@host.example:o/r.git'))).toBe('host.example');
    expect(hostOf(repoLocation('/srv/git/r'))).toBeUndefined();
    expect(hostOf(repoLocation('file:///srv/git/r'))).toBeUndefined();
  });

  it('trusts the named repositories’ hosts and the listed ones; a listed host without a port covers every port', () => {
    const trust = sourceTrust({
      named: ['https://git.corp.example/o/r', 'https://127.0.0.1:8443/o/r'],
      env: { KDELTA_CREDENTIAL_HOSTS: 'mirror.example, https://other.example:9443/x' },
    });
    const ok = (url: string) => credentialsAllowed(trust, repoLocation(url));
    expect(ok('https://git.corp.example/other/repo')).toBe(true);
    expect(ok('https://git.corp.example:444/other/repo')).toBe(false);
    expect(ok('https://127.0.0.1:8443/x')).toBe(true);
    expect(ok('https://127.0.0.1:9999/x')).toBe(false);
    expect(ok('https://mirror.example:8080/x')).toBe(true);
    expect(ok('https://other.example:9443/x')).toBe(true);
    expect(ok('https://attacker.example/o/r')).toBe(false);
    expect(ok('https://git.corp.example.attacker.example/o/r')).toBe(false);
  });

  it('sends no token to a host content named and the user did not, and resets git’s helpers for it', () => {
    const trust = sourceTrust({ named: ['https://git.corp.example/o/r'], env: {} });
    const env = { KDELTA_GIT_TOKEN: 'tok-123', GITHUB_TOKEN: 'gh-456' };
    const foreign = credentialsFor(repoLocation('https://github.com/evil/r'), { env, trust, token: 'tok-123' });
    expect(Object.values(foreign.env).join('\n')).not.toContain('Authorization');
    expect(foreign.env).toEqual({
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'credential.https://github.com/.helper',
      GIT_CONFIG_VALUE_0: '',
      GIT_CONFIG_KEY_1: 'http.https://github.com/.extraHeader',
      GIT_CONFIG_VALUE_1: '',
    });
    expect(foreign.secrets).toEqual(expect.arrayContaining(['tok-123', 'gh-456']));
    const own = credentialsFor(repoLocation('https://git.corp.example/o/sub'), { env, trust });
    expect(own.env.GIT_CONFIG_VALUE_0).toBe(header('tok-123'));
  });

  it('gives the run’s own token (tokenFor) to a repository on a trusted host, for every read, and never elsewhere', () => {
    const tokenFor = (url: string) => (url.startsWith('https://github.com/') ? 'run-token' : undefined);
    const tokenName = () => 'the GitHub App 1’s installation token for org';
    const trust = trustNamed(sourceTrust({ named: ['https://github.com/org/control'], tokenFor, tokenName, env: {} }), []);
    const upstream = credentialsFor(repoLocation('https://github.com/org/private-catalog'), { env: {}, trust });
    expect(upstream.env.GIT_CONFIG_VALUE_0).toBe(header('run-token'));
    expect(upstream.secrets).toContain('run-token');
    // what a refusal will name (never the value)
    expect(upstream.env.KDELTA_SENT_CREDENTIALS).toBe('the GitHub App 1’s installation token for org');
    const elsewhere = sourceTrust({ named: ['https://git.corp.example/o/r'], tokenFor: () => 'run-token', env: {} });
    const foreign = credentialsFor(repoLocation('https://github.com/evil/r'), { env: {}, trust: elsewhere });
    expect(Object.values(foreign.env).join('\n')).not.toContain('Authorization');
  });

  it('gives a foreign host only the credentials written into the content’s own URL, never the user’s', () => {
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
    expect(own.env.GIT_CONFIG_VALUE_2).toBe(`Authorization: Basic ${Buffer.from('anon:public').toString('base64')}`);
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

  it('are refused before git runs', async () => {
    const trust = sourceTrust({ env: {} });
    await expect(resolveRef({ repo: join(scratch, 'nowhere'), ref: 'main', trust, namedBy: 'sub/Kptfile' })).rejects.toThrow(
      /^sub\/Kptfile: upstream repository ".*nowhere" is on this machine/,
    );
  });
});
