import { describe, expect, it } from 'vitest';
import { credentialsFor } from './auth.js';
import { GitError } from './errors.js';
import { resolveRef } from './refs.js';
import { redact } from './redact.js';
import { repoLocation } from './url.js';

const token = 'ghp_SECRETSECRETSECRET123';

describe('credentials never leak', () => {
  it('redacts userinfo in URLs, authorization headers and known secrets (plain and base64)', () => {
    expect(redact(`fatal: unable to access 'https://x-access-token:${token}@github.com/o/r/'`)).toBe(
      "fatal: unable to access 'https://***@github.com/o/r/'",
    );
    expect(redact('Authorization: Basic eC1hY2Nlc3MtdG9rZW46Z2hw')).toBe('Authorization: Basic ***');
    const b64 = Buffer.from(`x-access-token:${token}`).toString('base64');
    expect(redact(`token ${token} and ${b64}`, [token])).toBe('token *** and ***');
  });

  it('passes a token to git in the environment, scoped to the origin, never in arguments', () => {
    const creds = credentialsFor(repoLocation('https://github.com/o/r.git'), { env: { GITHUB_TOKEN: token } });
    expect(creds.env.GIT_CONFIG_KEY_0).toBe('http.https://github.com/.extraHeader');
    expect(creds.env.GIT_CONFIG_VALUE_0).toContain('Authorization: Basic ');
    expect(creds.secrets).toContain(token);
    // GITHUB_TOKEN is for github.com only
    expect(credentialsFor(repoLocation('https://gitlab.example.com/o/r'), { env: { GITHUB_TOKEN: token } }).env).toEqual({});
    expect(credentialsFor(repoLocation('https://gitlab.example.com/o/r'), { env: { KDELTA_GIT_TOKEN: token } }).env.GIT_CONFIG_COUNT).toBe(
      '1',
    );
  });

  it('keeps a token out of the error of a failing git call', async () => {
    // an unreachable https URL with credentials in it: the error must not show them
    const error = await resolveRef({
      repo: `https://user:${token}@127.0.0.1:9/o/r.git`,
      ref: 'main',
      env: { KDELTA_GIT_TOKEN: token },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    const all = JSON.stringify({ m: (error as GitError).message, a: (error as GitError).args, s: (error as GitError).stderr });
    expect(all).not.toContain(token);
    // the URL git was given, and so every URL in the error, is the clean one
    expect((error as GitError).message).toContain("'https://127.0.0.1:9/o/r.git/'");
    expect(all).not.toContain('user');
  });

  it('classifies repository kinds and refuses unknown schemes', () => {
    expect(repoLocation('git@github.com:o/r.git').kind).toBe('ssh');
    expect(repoLocation('ssh://git@host/o/r').kind).toBe('ssh');
    expect(repoLocation('file:///tmp/r').kind).toBe('file');
    expect(repoLocation('rel/path', '/base')).toEqual({ kind: 'local', url: '/base/rel/path' });
    expect(() => repoLocation('ext::sh -c evil')).toThrow(GitError);
    expect(() => repoLocation('-u')).toThrow(/starts with "-"/);
  });
});
