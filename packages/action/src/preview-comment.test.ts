import { describe, expect, it, onTestFinished } from 'vitest';
import { startFakeGitHub } from '@kdelta/fake-github';
import { previewMarker, upsertComment } from './preview-comment.js';

// The preview's comment against what GitHub's documentation promises: the comments' pages as the
// `link` header says, and the headers every request should carry.

describe('the preview comment', () => {
  it('is found on a later page of the comments (the link header, not a page’s length) and kept as one comment', async () => {
    const gh = await startFakeGitHub({ maxPerPage: 2 });
    onTestFinished(() => gh.close());
    await gh.createRepo('org/catalog', { defaultBranch: 'main', files: { 'README.md': '# catalog\n' } });
    await gh.humanCommit('org/catalog', 'next', { 'a.txt': 'a\n' });
    const send = (path: string, body: unknown) =>
      fetch(`${gh.apiUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gh.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ number: number }>);
    const pr = await send('/repos/org/catalog/pulls', { title: 'next', head: 'next', base: 'main' });
    for (const body of ['looks good', 'one question', 'answered']) await send(`/repos/org/catalog/issues/${pr.number}/comments`, { body });
    const target = { apiUrl: gh.apiUrl, token: gh.token, repository: 'org/catalog', number: pr.number };
    const marker = previewMarker('workspace .kdelta');
    expect(await upsertComment(target, marker, 'first')).toMatchObject({ action: 'created' });
    // a fourth comment: the preview's is on the second page of two
    await send(`/repos/org/catalog/issues/${pr.number}/comments`, { body: 'thanks' });
    expect(await upsertComment(target, marker, 'second')).toMatchObject({ action: 'updated' });
    expect(await upsertComment(target, marker, 'second')).toMatchObject({ action: 'unchanged' });
    expect(
      gh
        .comments('org/catalog', pr.number)
        .filter((c) => c.body.startsWith(marker))
        .map((c) => c.body),
    ).toEqual([`${marker}\nsecond`]);
    // each request says who sends it, what it accepts and which API version it speaks
    const ours = gh.requests.filter((r) => r.path.includes('/comments') && r.headers?.userAgent?.startsWith('kdelta'));
    expect(ours.length).toBeGreaterThan(0);
    expect(gh.requests.filter((r) => r.path.includes('/comments') && r.headers?.accept === 'application/vnd.github+json')).toEqual(ours);
    expect(new Set(ours.map((r) => r.headers?.apiVersion))).toEqual(new Set(['2022-11-28']));
    expect(gh.violations).toEqual([]);
  });
});
