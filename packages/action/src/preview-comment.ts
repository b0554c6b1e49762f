import { KdeltaError } from '@kdelta/errors';
import { createGitHubClient } from '@kdelta/run/github';

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

/** The token, as a refusal names it. */
const TOKEN_NAME = 'the token of input "comment-token" (else "token")';

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

/** The comment carrying `marker` on the pull request, created or brought up to date with `body`. */
export async function upsertComment(target: CommentTarget, marker: string, body: string): Promise<CommentResult> {
  // the run's one GitHub client: its API version and headers, its retries, its pagination
  const client = createGitHubClient({ token: target.token, apiUrl: target.apiUrl, env: {}, tokenName: TOKEN_NAME });
  const [owner = '', repo = ''] = target.repository.split('/');
  const where = { owner, repo, issue_number: target.number };
  const text = `${marker}\n${body}`;
  const ours = (c: IssueComment) => (c.body ?? '').includes(marker);
  try {
    // every page, as the `link` header says, until the preview's own is found
    const comments = await client.allPages<IssueComment>(
      `read the comments of ${target.repository}#${target.number}`,
      'GET /repos/{owner}/{repo}/issues/{issue_number}/comments',
      { ...where, per_page: 100 },
      (batch) => batch.some(ours),
    );
    const found = comments.find(ours);
    if (!found) {
      const made = await client.call<IssueComment>(
        `comment on ${target.repository}#${target.number}`,
        'POST /repos/{owner}/{repo}/issues/{issue_number}/comments',
        { ...where, body: text },
      );
      return { url: made.html_url, action: 'created' };
    }
    if (found.body === text) return { url: found.html_url, action: 'unchanged' };
    const updated = await client.call<IssueComment>(
      `update the preview's comment on ${target.repository}#${target.number}`,
      'PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}',
      { owner, repo, comment_id: found.id, body: text },
    );
    return { url: updated.html_url, action: 'updated' };
  } catch (error) {
    throw new CommentError(`${error instanceof Error ? error.message : String(error)}${permissionHint(error, target)}`);
  }
}

/** A refusal (403, or 404: GitHub hides what a token may not see) that names no permission says what to grant. */
function permissionHint(error: unknown, target: CommentTarget): string {
  const code = (error as { code?: unknown }).code;
  return code === 'forbidden' || /\(404\)/.test(error instanceof Error ? error.message : '')
    ? `: give the workflow \`permissions: pull-requests: write\` on ${target.repository} (the token of input "comment-token")`
    : '';
}
