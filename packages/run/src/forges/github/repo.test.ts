import { describe, expect, it } from 'vitest';
import { commitUrlOf, compareUrlOf, githubRepoOf } from './repo.js';

describe('downstream repository URLs on the GitHub server', () => {
  it.each([
    ['https://github.com/org/cluster-01', 'https://github.com'],
    ['https://github.com/org/cluster-01.git', 'https://github.com'],
    ['https://github.com/org/cluster-01/', 'https://github.com/'],
    ['https://x-access-token:secret@github.com/org/cluster-01.git', 'https://github.com'],
    ['git@github.com:org/cluster-01.git', 'https://github.com'],
    ['ssh://git@github.com/org/cluster-01.git', 'https://github.com'],
    ['https://ghe.example.com/org/cluster-01.git', 'https://ghe.example.com'],
    ['http://127.0.0.1:8080/org/cluster-01.git', 'http://127.0.0.1:8080'],
    ['https://example.com/git/org/cluster-01', 'https://example.com/git'],
  ])('%s on %s is org/cluster-01', (url, server) => {
    expect(githubRepoOf(url, server)).toEqual({ ok: true, value: { owner: 'org', repo: 'cluster-01' } });
  });

  it('a URL on another host is a clear error naming it and the server', () => {
    const r = githubRepoOf('https://gitlab.com/org/cluster-01.git', 'https://github.com');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toBe(
      'repository "https://gitlab.com/org/cluster-01.git" is on https://gitlab.com: the github forge opens pull requests on https://github.com only (expected https://github.com/<owner>/<repo>; use --forge local for other hosts)',
    );
  });

  it.each([
    ['/repos/cluster-01.git', /is not a URL/],
    ['file:///repos/cluster-01.git', /is a file URL/],
    ['https://github.com/org', /does not name <owner>\/<repo>/],
    ['https://github.com/org/repo/tree/main', /does not name <owner>\/<repo>/],
    ['http://github.com/org/repo', /is on http:\/\/github.com/],
    ['git@gitlab.com:org/repo.git', /is on gitlab.com/],
  ])('%s is refused', (url, why) => {
    const r = githubRepoOf(url, 'https://github.com');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(why);
  });

  it('never repeats credentials written into the URL', () => {
    const r = githubRepoOf('https://user:hunter2@gitlab.com/org/repo.git', 'https://github.com');
    expect(!r.ok && r.error).not.toContain('hunter2');
  });

  it('links the upstream compare page only for an upstream on the same server and a real move', () => {
    expect(compareUrlOf('https://github.com/org/catalog.git', 'aaa', 'bbb', 'https://github.com')).toBe(
      'https://github.com/org/catalog/compare/aaa...bbb',
    );
    expect(compareUrlOf('https://gitlab.com/org/catalog.git', 'aaa', 'bbb', 'https://github.com')).toBeUndefined();
    expect(compareUrlOf('https://github.com/org/catalog.git', 'aaa', 'aaa', 'https://github.com')).toBeUndefined();
    expect(compareUrlOf('/local/catalog', 'aaa', 'bbb', 'https://github.com')).toBeUndefined();
  });
});

describe("an upstream commit's page", () => {
  const sha = 'a1'.repeat(20);
  it.each([
    {
      name: 'on the server',
      repo: 'https://github.com/org/catalog.git',
      server: 'https://github.com',
      url: `https://github.com/org/catalog/commit/${sha}`,
    },
    {
      name: 'over ssh, on an Enterprise Server under a path',
      repo: 'git@ghe.example.com:org/catalog.git',
      server: 'https://ghe.example.com/git',
      url: `https://ghe.example.com/git/org/catalog/commit/${sha}`,
    },
    {
      name: 'on an Enterprise Server',
      repo: 'https://ghe.example.com/org/catalog',
      server: 'https://ghe.example.com',
      url: `https://ghe.example.com/org/catalog/commit/${sha}`,
    },
    { name: 'elsewhere', repo: 'https://gitlab.com/org/catalog.git', server: 'https://github.com', url: undefined },
    { name: 'on this machine', repo: '/local/catalog', server: 'https://github.com', url: undefined },
  ])('$name', ({ repo, server, url }) => {
    expect(commitUrlOf(repo, sha, server)).toBe(url);
  });

  it('only for a full commit id', () => {
    expect(commitUrlOf('https://github.com/org/catalog', 'main', 'https://github.com')).toBeUndefined();
  });
});
