/**
 * What every request to GitHub's REST API says, as GitHub's documentation asks: the media type
 * `application/vnd.github+json` (Octokit's default still names the old `v3` one), the API version
 * it was written against, and who sends it (the user agent, which GitHub requires).
 */

export const GITHUB_API_VERSION = '2022-11-28';
export const GITHUB_MEDIA_TYPE = 'application/vnd.github+json';
export const USER_AGENT = 'kdelta';

/** Sets the documented headers on an Octokit request's options (its `before` hook). */
export function documentedHeaders(options: { headers: Record<string, unknown> }): void {
  options.headers.accept = GITHUB_MEDIA_TYPE;
  options.headers['x-github-api-version'] = GITHUB_API_VERSION;
}
