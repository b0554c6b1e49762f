import { describe, expect, it } from 'vitest';
import { credentialsFor } from './auth.js';
import { hideCredentials } from './redact.js';
import { repoCacheKey, repoLocation, repositoryIdentity, splitCredentials, withoutCredentials } from './url.js';

describe('splitCredentials', () => {
  it('takes user and password out of an http(s) URL, percent-decoded', () => {
    expect(splitCredentials('https://alice:s3cr%40t%2Fx@git.example.com/o/r.git')).toEqual({
      url: 'https://git.example.com/o/r.git',
      credentials: { username: 'alice', password: 's3cr@t/x' },
    });
    expect(splitCredentials('HTTP://u:p@127.0.0.1:8080/r')).toEqual({
      url: 'HTTP://127.0.0.1:8080/r',
      credentials: { username: 'u', password: 'p' },
    });
  });

  it('splits at the last @ of the host part, so an unencoded @ in a password stays in the password', () => {
    expect(splitCredentials('https://u:p@ss@host/r.git/pkg@v1')).toEqual({
      url: 'https://host/r.git/pkg@v1',
      credentials: { username: 'u', password: 'p@ss' },
    });
  });

  it('takes a lone user name out of an http(s) URL too (it is as likely a token)', () => {
    expect(splitCredentials('https://ghp_token123@github.com/o/r')).toEqual({
      url: 'https://github.com/o/r',
      credentials: { username: 'ghp_token123', password: '' },
    });
    expect(splitCredentials('https://u:@host/r')).toEqual({ url: 'https://host/r', credentials: { username: 'u', password: '' } });
  });

  it('keeps the user name of ssh and file URLs (part of the address) but not a password', () => {
    expect(splitCredentials('ssh://git@github.com/o/r.git')).toEqual({ url: 'ssh://git@github.com/o/r.git' });
    expect(splitCredentials('ssh://git:hunter22@host:2222/o/r')).toEqual({
      url: 'ssh://git@host:2222/o/r',
      credentials: { username: 'git', password: 'hunter22' },
    });
    expect(splitCredentials('git@github.com:o/r.git')).toEqual({ url: 'git@github.com:o/r.git' });
    expect(splitCredentials('file:///tmp/r@x')).toEqual({ url: 'file:///tmp/r@x' });
  });

  it('leaves URLs without userinfo and local paths alone, @ in their paths included', () => {
    for (const repo of ['https://host/o/r.git@v1', 'https://[::1]:8443/r', '/srv/git/r@2', 'rel/r', 'C:/r', 'https://host']) {
      expect(splitCredentials(repo)).toEqual({ url: repo });
    }
  });

  it('gives the same location and cache key with or without credentials', () => {
    expect(repoLocation('https://u:tok@host/r.git')).toEqual(repoLocation('https://host/r.git'));
    expect(repoCacheKey('https://u:tok@host/r')).toBe(repoCacheKey('https://host/r'));
    expect(repoCacheKey('https://tok@host/r.git')).toBe(repoCacheKey('https://host/r'));
    expect(repoCacheKey('https://u:tok@host/r')).not.toContain('tok');
    expect(withoutCredentials('http://u:p@h/r')).toBe('http://h/r');
  });
});

describe('repositoryIdentity', () => {
  it('spells one repository one way: credentials, a trailing slash or .git and the case of the host do not count', () => {
    const same = [
      'https://github.com/o/r',
      'https://x-token:tok@github.com/o/r.git',
      'https://GitHub.com/o/r/',
      'HTTPS://github.com/o/r.git/',
    ];
    for (const url of same) expect(repositoryIdentity(url)).toBe('https://github.com/o/r');
    expect(repositoryIdentity('file:///srv/git/r.git')).toBe('/srv/git/r');
    expect(repositoryIdentity('/srv/git/r.git/')).toBe('/srv/git/r');
  });

  it('keeps apart what may be different repositories: paths differ in case, schemes differ', () => {
    expect(repositoryIdentity('https://github.com/o/R')).not.toBe(repositoryIdentity('https://github.com/o/r'));
    expect(repositoryIdentity('ssh://git@github.com/o/r')).not.toBe(repositoryIdentity('https://github.com/o/r'));
  });
});

describe('credentials from a URL', () => {
  it('go to git as a Basic header for the origin, in the environment', () => {
    const url = 'http://bob:pa%3Ass@127.0.0.1:8080/r';
    const { credentials } = splitCredentials(url);
    const creds = credentialsFor(repoLocation(url), { urlCredentials: credentials, env: { GIT_CONFIG_COUNT: '2' } });
    expect(creds.env).toEqual({
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_2: 'http.http://127.0.0.1:8080/.extraHeader',
      GIT_CONFIG_VALUE_2: `Authorization: Basic ${Buffer.from('bob:pa:ss').toString('base64')}`,
      // read back by runGit for the message of a refusal: a name, never a value
      KDELTA_SENT_CREDENTIALS: 'the credentials given with the repository URL',
    });
    expect(creds.secrets).toEqual(expect.arrayContaining(['pa:ss', 'bob:pa:ss']));
  });

  it('take precedence over an environment token; a lone user name only pre-fills git’s credential helpers', () => {
    const withToken = credentialsFor(repoLocation('https://host/r'), {
      urlCredentials: { username: 'u', password: 'pw12' },
      env: { KDELTA_GIT_TOKEN: 'envtoken' },
    });
    expect(withToken.env.GIT_CONFIG_VALUE_0).toBe(`Authorization: Basic ${Buffer.from('u:pw12').toString('base64')}`);
    const lone = credentialsFor(repoLocation('https://host/r'), { urlCredentials: { username: 'ghp_abc', password: '' }, env: {} });
    expect(lone.env).toEqual({
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'credential.https://host/.username',
      GIT_CONFIG_VALUE_0: 'ghp_abc',
    });
    expect(lone.secrets).toContain('ghp_abc');
  });

  it('an environment token is not sent over plain http', () => {
    expect(credentialsFor(repoLocation('http://host/r'), { env: { KDELTA_GIT_TOKEN: 'envtoken' } }).env).toEqual({});
  });

  it('an explicit token goes over plain http to this machine only', () => {
    expect(credentialsFor(repoLocation('http://host/r'), { token: 'tok', env: {} }).env).toEqual({});
    expect(credentialsFor(repoLocation('http://127.0.0.1:8080/o/r.git'), { token: 'tok', env: {} }).env).toEqual({
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.http://127.0.0.1:8080/.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from('x-access-token:tok').toString('base64')}`,
      KDELTA_SENT_CREDENTIALS: 'the token kdelta was given for 127.0.0.1:8080',
    });
    expect(credentialsFor(repoLocation('http://127.0.0.1:8080/o/r.git'), { env: { KDELTA_GIT_TOKEN: 'envtoken' } }).env).toEqual({});
  });
});

describe('hideCredentials', () => {
  it('prints URLs as they are stored: http(s) without userinfo, ssh with its user but no password', () => {
    expect(hideCredentials("Fetching https://u:s3cret@host/r@v1 and 'ssh://git:pw@h/r' and ssh://git@h/r")).toBe(
      "Fetching https://host/r@v1 and 'ssh://git@h/r' and ssh://git@h/r",
    );
    expect(hideCredentials('token s3cret in text', ['s3cret'])).toBe('token *** in text');
  });
});
