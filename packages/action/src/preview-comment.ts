import { KdeltaError } from '@kdelta/errors';
import { nextPageOf } from '@kdelta/run';

/**
 * The preview's one comment on the reviewed pull request: found again by a hidden marker and
 * edited in place on later pushes, never a second one. Needs `pull-requests: write` on that
 * repository only (GitHub keeps a pull request's comments as its issue's).
 */

/** A comment request GitHub refused: the status and what to grant. */
export class CommentError extends KdeltaError {
  override readonly name = 'CommentError';
  declare readonly code: 'comment-failed';
  constructor(message: string) {
    super({ code: 'comment-failed', message });
  }
}

/** The hidden line that marks a comment as this preview's: one per control configuration. */
export function previewMarker(key: string): string {
  return `<!-- kdelta-preview: ${key.replace(/--/g, '-\\u002d')} -->`;
}

export interface CommentTarget {
  readonly apiUrl: string;
  readonly token: string;
  /** `owner/name`. */
  readonly repository: string;
  readonly number: number;
}

export interface CommentResult {
  readonly url: string;
  readonly action: 'created' | 'updated' | 'unchanged';
}

interface IssueComment {
  readonly id: number;
  readonly body?: string | null;
  readonly html_url: string;
}

/** A request to the API at `path` (below the API's URL) or at a full `url` on it (a next page's); its JSON and its `link` header. */
async function request(
  target: CommentTarget,
  method: string,
  path: string | { url: string },
  body?: unknown,
): Promise<{ data: unknown; link: string | null }> {
  const url = typeof path === 'string' ? `${target.apiUrl.replace(/\/+$/, '')}${path}` : path.url;
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${target.token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'kdelta',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    const why = (() => {
      try {
        return (JSON.parse(text) as { message?: string }).message ?? text;
      } catch {
        return text;
      }
    })();
    const hint =
      res.status === 403 || res.status === 404
        ? `: give the workflow \`permissions: pull-requests: write\` on ${target.repository} (the token of input "comment-token")`
        : '';
    throw new CommentError(
      `${method} ${typeof path === 'string' ? path : new URL(path.url).pathname}: GitHub answered ${res.status} ${why.slice(0, 200)}${hint}`,
    );
  }
  return { data: await res.json(), link: res.headers.get('link') };
}

/** The comment carrying `marker` on the pull request, created or brought up to date with `body`. */
export async function upsertComment(target: CommentTarget, marker: string, body: string): Promise<CommentResult> {
  const text = `${marker}\n${body}`;
  const base = `/repos/${target.repository}/issues/${target.number}/comments`;
  let found: IssueComment | undefined;
  // every page, as the `link` header says (a page's length does not tell the last one)
  let page = await request(target, 'GET', `${base}?per_page=100`);
  const followed = new Set<string>();
  for (;;) {
    found = (page.data as IssueComment[]).find((c) => (c.body ?? '').includes(marker));
    if (found) break;
    const next = nextPageOf(page.link, target.apiUrl);
    if (!next.ok) throw new CommentError(`GET ${base}: ${next.error}`);
    if (next.url === undefined) break;
    if (followed.has(next.url)) throw new CommentError(`GET ${base}: the next page's link repeats ${next.url}`);
    followed.add(next.url);
    page = await request(target, 'GET', { url: next.url });
  }
  if (!found) {
    const made = (await request(target, 'POST', base, { body: text })).data as IssueComment;
    return { url: made.html_url, action: 'created' };
  }
  if (found.body === text) return { url: found.html_url, action: 'unchanged' };
  const updated = (await request(target, 'PATCH', `/repos/${target.repository}/issues/comments/${found.id}`, { body: text }))
    .data as IssueComment;
  return { url: updated.html_url, action: 'updated' };
}
