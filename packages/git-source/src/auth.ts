import type { RepoLocation } from './url.js';

export interface Credentials {
  /** Environment for git (a scoped `http.extraHeader` passed through GIT_CONFIG_*, never argv). */
  readonly env: Readonly<Record<string, string>>;
  /** Values to scrub from anything printed. */
  readonly secrets: readonly string[];
}

/**
 * Credentials for an https repository: `token` if given, else KDELTA_GIT_TOKEN, else GITHUB_TOKEN
 * for github.com. The token travels to git in the environment (never on the command line, where
 * `ps` would show it) and only for the repository's own origin. Without a token git's own
 * credential helpers and ssh agent apply unchanged.
 */
export function credentialsFor(
  location: RepoLocation,
  options: { token?: string | undefined; env?: Readonly<Record<string, string | undefined>> } = {},
): Credentials {
  const env = options.env ?? process.env;
  const known = [options.token, env.KDELTA_GIT_TOKEN, env.GITHUB_TOKEN, env.GH_TOKEN].filter(
    (s): s is string => typeof s === 'string' && s.length > 0,
  );
  if (location.kind !== 'https') return { env: {}, secrets: known };
  let origin: URL;
  try {
    origin = new URL(location.url);
  } catch {
    return { env: {}, secrets: known };
  }
  const token =
    options.token ?? env.KDELTA_GIT_TOKEN ?? (origin.hostname === 'github.com' ? (env.GITHUB_TOKEN ?? env.GH_TOKEN) : undefined);
  if (!token || origin.username) return { env: {}, secrets: known };
  const header = `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  const countBefore = Number(env.GIT_CONFIG_COUNT ?? '0') || 0;
  return {
    env: {
      GIT_CONFIG_COUNT: String(countBefore + 1),
      [`GIT_CONFIG_KEY_${countBefore}`]: `http.${origin.protocol}//${origin.host}/.extraHeader`,
      [`GIT_CONFIG_VALUE_${countBefore}`]: header,
    },
    secrets: known,
  };
}
