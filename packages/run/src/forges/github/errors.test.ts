import { describe, expect, it } from 'vitest';
import { describeGitHubError, githubErrorCode, missingPermissionAdvice, parseAcceptedPermissions } from './errors.js';

const failure = (status: number, headers: Record<string, string> = {}, data: unknown = {}) =>
  Object.assign(new Error(`HTTP ${status}`), { status, response: { headers, data } });

describe('GitHub refusals a user can act on', () => {
  it('names the missing permission and both ways to get it', () => {
    expect(missingPermissionAdvice('pull_requests=write')).toBe(
      'the token lacks pull_requests=write: give the workflow `permissions: pull-requests: write`, or use a GitHub App token with Pull requests: Read and write',
    );
    expect(
      describeGitHubError(failure(403, { 'x-accepted-github-permissions': 'contents=write' }), 'create branch kdelta/web in org/c1'),
    ).toBe(
      'GitHub: cannot create branch kdelta/web in org/c1: the token lacks contents=write: give the workflow `permissions: contents: write`, or use a GitHub App token with Contents: Read and write',
    );
  });

  it('reads alternatives and combined permissions from the header', () => {
    expect(parseAcceptedPermissions('contents=read; pull_requests=write,issues=write')).toEqual([
      [{ name: 'contents', level: 'read' }],
      [
        { name: 'pull_requests', level: 'write' },
        { name: 'issues', level: 'write' },
      ],
    ]);
    expect(missingPermissionAdvice('issues=write,pull_requests=write; statuses=write')).toBe(
      'the token lacks issues=write, pull_requests=write: give the workflow `permissions: issues: write, pull-requests: write`, or use a GitHub App token with Issues: Read and write, Pull requests: Read and write (GitHub also accepts statuses=write)',
    );
  });

  it('a 404 carrying the header is a missing permission too (GitHub hides what a token cannot read)', () => {
    expect(
      describeGitHubError(failure(404, { 'X-Accepted-GitHub-Permissions': 'pull_requests=read' }), 'list the pull requests of org/c1'),
    ).toMatch(/the token lacks pull_requests=read: .*Pull requests: Read-only/);
  });

  it('401 says the credentials are bad, without the token', () => {
    const text = describeGitHubError(failure(401, {}, { message: 'Bad credentials' }), 'list the pull requests of org/c1', 'GITHUB_TOKEN');
    expect(text).toBe(
      'GitHub: cannot list the pull requests of org/c1: GitHub refused GITHUB_TOKEN (401 bad credentials: expired, revoked or mistyped)',
    );
  });

  it('a plain 404, a rate limit and a validation failure each say what happened', () => {
    expect(describeGitHubError(failure(404), 'list the pull requests of org/none')).toMatch(/not found \(404\).*GitHub App token or a PAT/);
    expect(
      describeGitHubError(
        failure(403, { 'retry-after': '60' }, { message: 'You have exceeded a secondary rate limit' }),
        'open the pull request',
      ),
    ).toMatch(/rate limited \(403, retry after 60s\).*the next run continues/);
    expect(
      describeGitHubError(
        failure(422, {}, { message: 'Validation Failed', errors: [{ message: 'No commits between main and kdelta/web' }] }),
        'open it',
      ),
    ).toBe('GitHub: cannot open it: 422 Validation Failed; No commits between main and kdelta/web');
  });
});

describe('a suspended App installation', () => {
  it('says to unsuspend it, not to pass another token', () => {
    const text = describeGitHubError(
      failure(403, {}, { message: 'This installation has been suspended' }),
      'make an installation token of the GitHub App 77 for org',
      'the token',
      'org',
    );
    expect(text).toMatch(/installation on org is suspended .*an owner of org must unsuspend it/);
    expect(text).not.toMatch(/App token|PAT|permissions:/);
  });
});

describe('the code of a GitHub refusal', () => {
  it('tells a named missing permission from a plain refusal and from everything else', () => {
    expect(githubErrorCode(failure(403, { 'x-accepted-github-permissions': 'pull_requests=write' }))).toBe('missing-permission');
    expect(githubErrorCode(failure(404, { 'x-accepted-github-permissions': 'contents=read' }))).toBe('missing-permission');
    expect(githubErrorCode(failure(403, {}, { message: 'Resource not accessible by integration' }))).toBe('forbidden');
    expect(githubErrorCode(failure(403, {}, { message: 'This installation has been suspended' }))).toBe('installation-suspended');
    expect(githubErrorCode(failure(403, {}, { message: 'You have exceeded a secondary rate limit' }))).toBe('github-request-failed');
    expect(githubErrorCode(failure(404))).toBe('github-request-failed');
    expect(githubErrorCode(new Error('socket hang up'))).toBe('github-request-failed');
  });
});
