import { KdeltaError } from '@kdelta/merge-core';

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

async function request(target: CommentTarget, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${target.apiUrl.replace(/\/+$/, '')}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${target.token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
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
    throw new CommentError(`${method} ${path}: GitHub answered ${res.status} ${why.slice(0, 200)}${hint}`);
  }
  return res.json();
}

/** The comment carrying `marker` on the pull request, created or brought up to date with `body`. */
export async function upsertComment(target: CommentTarget, marker: string, body: string): Promise<CommentResult> {
  const text = `${marker}\n${body}`;
  const base = `/repos/${target.repository}/issues/${target.number}/comments`;
  let found: IssueComment | undefined;
  for (let page = 1; !found; page++) {
    const comments = (await request(target, 'GET', `${base}?per_page=100&page=${page}`)) as IssueComment[];
    found = comments.find((c) => (c.body ?? '').includes(marker));
    if (comments.length < 100) break;
  }
  if (!found) {
    const made = (await request(target, 'POST', base, { body: text })) as IssueComment;
    return { url: made.html_url, action: 'created' };
  }
  if (found.body === text) return { url: found.html_url, action: 'unchanged' };
  const updated = (await request(target, 'PATCH', `/repos/${target.repository}/issues/comments/${found.id}`, {
    body: text,
  })) as IssueComment;
  return { url: updated.html_url, action: 'updated' };
}
