import { describe, expect, it } from 'vitest';
import { credentialsFor } from './auth.js';
import { isGitError } from './errors.js';
import { parseServerTokens, serverTokenSecrets } from './server-tokens.js';
import { serverTokenFor, sourceTrust, unusedServerTokens } from './trust.js';
import { repoLocation } from './url.js';

const header = (token: string) => `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
/** The Authorization headers git would send, by the URL each is scoped to. */
const headers = (env: Readonly<Record<string, string>>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (let i = 0; i < Number(env.GIT_CONFIG_COUNT ?? 0); i++) {
    const value = env[`GIT_CONFIG_VALUE_${i}`]!;
    if (value.startsWith('Authorization')) out[env[`GIT_CONFIG_KEY_${i}`]!] = value;
  }
  return out;
};

describe('parseServerTokens', () => {
  it.each([
    ['https://ghes.example.com=tok-1', [{ server: 'https://ghes.example.com', token: 'tok-1' }]],
    ['  HTTPS://GHES.example.com/ = tok-1  ', [{ server: 'https://ghes.example.com', token: 'tok-1' }]],
    ['https://ghes.example.com:8443=a=b', [{ server: 'https://ghes.example.com:8443', token: 'a=b' }]],
    [
      '\nhttps://a.example=1\n\nhttps://b.example=2\n',
      [
        { server: 'https://a.example', token: '1' },
        { server: 'https://b.example', token: '2' },
      ],
    ],
  ])('reads %j', (text, tokens) => {
    expect(parseServerTokens(text.split('\n'))).toEqual({ tokens });
  });

  it.each([
    ['https://a.example=1\nghes.example.com', 'line 2 is not <server>=<token> (https://ghes.example.com=<token>): it has no "="'],
    ['https://ghes.example.com=', 'line 1 gives "https://ghes.example.com" an empty token (is its secret set in this repository?)'],
    [
      '\n\nhttp://ghes.example.com=secret-1',
      'line 3 has the server "http://ghes.example.com", which is not https: a token travels over https only',
    ],
    [
      'https://ghes.example.com/org/repo=secret-1',
      'line 1 has the server "https://ghes.example.com/org/repo", which has a path: name the whole server (https://host), the repositories are listed in credential-repositories',
    ],
    ['ghes.example.com=secret-1', 'line 1 has the server "ghes.example.com", which is not a URL: write https://host or https://host:port'],
    ['=secret-1', 'line 1 names no server before "=" (https://ghes.example.com=<token>)'],
    ['https://a.example=secret-1\nhttps://A.example/=secret-2', 'line 2 gives "https://a.example" a second token'],
  ])('refuses %j naming the line, never the token', (text, problem) => {
    const parsed = parseServerTokens(text.split('\n'));
    expect(parsed).toEqual({ problem });
    expect(problem).not.toMatch(/secret-/);
  });

  it('finds every value to mask, even on lines that do not parse', () => {
    expect(serverTokenSecrets('https://a.example=tok-1\nnot a line\nb.example = tok-2\n')).toEqual(['tok-1', 'tok-2']);
  });
});

describe('a token per server', () => {
  const env = {
    KDELTA_SERVER_TOKENS: 'https://ghes.example.com=ghes-token\nhttps://git.example.org:8443=org-token',
  };
  const trust = sourceTrust({
    named: ['https://github.com/org-a/control', 'https://ghes.example.com/platform/catalog'],
    repositories: ['https://git.example.org:8443/team/*'],
    env,
  });

  it.each([
    // the server's repositories the user named or listed get its token, and nothing else does
    ['https://ghes.example.com/platform/catalog.git', 'ghes-token'],
    ['https://git.example.org:8443/team/pkgs', 'org-token'],
    ['https://ghes.example.com/platform/other', undefined],
    ['https://git.example.org/team/pkgs', undefined],
    ['https://github.com/org-a/control', undefined],
    ['https://evil.example/platform/catalog', undefined],
    ['https://ghes.example.com.evil.example/platform/catalog', undefined],
  ])('%s gets %s', (url, token) => {
    expect(serverTokenFor(trust, repoLocation(url))?.token).toBe(token);
    const sent = headers(credentialsFor(repoLocation(url), { env: {}, trust }).env);
    if (token === undefined) expect(sent).toEqual({});
    else expect(sent).toEqual({ [`http.${new URL(url).origin}/.extraHeader`]: header(token) });
  });

  it('names the token, never its value, for a refusal, and scrubs every server token from output', () => {
    const creds = credentialsFor(repoLocation('https://ghes.example.com/platform/catalog'), { env: {}, trust });
    expect(creds.env.KDELTA_SENT_CREDENTIALS).toBe(
      "the server token for https://ghes.example.com (KDELTA_SERVER_TOKENS (kdelta run's --server-token, the Action's server-tokens input))",
    );
    const elsewhere = credentialsFor(repoLocation('https://evil.example/x'), { env: {}, trust });
    expect(elsewhere.secrets).toEqual(expect.arrayContaining(['ghes-token', 'org-token']));
  });

  it('says which servers no named or listed repository is on', () => {
    const extra = sourceTrust({
      named: ['https://ghes.example.com/platform/catalog'],
      env: { KDELTA_SERVER_TOKENS: 'https://ghes.example.com=a,https://typo.example.com=b' },
    });
    expect(unusedServerTokens(extra)).toEqual(['https://typo.example.com']);
  });

  it('refuses a bad KDELTA_SERVER_TOKENS naming the variable and the line', () => {
    const refusal = (() => {
      try {
        sourceTrust({ env: { KDELTA_SERVER_TOKENS: 'https://ghes.example.com=' } });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(isGitError(refusal) && refusal.code).toBe('invalid-server-token');
    expect((refusal as Error).message).toBe(
      'KDELTA_SERVER_TOKENS: line 1 gives "https://ghes.example.com" an empty token (is its secret set in this repository?)',
    );
  });
});
