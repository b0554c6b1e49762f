import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/core';
import { describeGitHubError, githubErrorCode } from './errors.js';
import { documentedHeaders, USER_AGENT } from './headers.js';
import { ForgeError } from '../errors.js';

/**
 * Which token the GitHub forge sends, per repository owner: one token for everything (the `token`
 * input, GITHUB_TOKEN, GH_TOKEN), or a GitHub App's installation token per owner, minted through
 * `@octokit/auth-app` (JWT and token exchange are its work, not ours) and renewed before its hour
 * runs out. Tokens live in memory only; each new one is handed to `onToken` (the Action masks it).
 */

/** A GitHub App's credentials: the App's id (or its client id) and its private key (PEM). */
export interface GitHubAppCredentials {
  readonly appId?: string | undefined;
  readonly clientId?: string | undefined;
  readonly privateKey: string;
}

/** Milliseconds, injectable for tests. */
export interface ForgeClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: ForgeClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export const APP_ID_ENV = 'KDELTA_GITHUB_APP_ID';
export const APP_CLIENT_ID_ENV = 'KDELTA_GITHUB_APP_CLIENT_ID';
export const APP_PRIVATE_KEY_ENV = 'KDELTA_GITHUB_APP_PRIVATE_KEY';

/** The App credentials given, else those of the environment (KDELTA_GITHUB_APP_ID or _CLIENT_ID, and _PRIVATE_KEY), else none. */
export function githubAppOf(
  given: GitHubAppCredentials | undefined,
  env: Readonly<Record<string, string | undefined>>,
): GitHubAppCredentials | undefined {
  const app = given ?? {
    appId: env[APP_ID_ENV] || undefined,
    clientId: env[APP_CLIENT_ID_ENV] || undefined,
    privateKey: env[APP_PRIVATE_KEY_ENV] ?? '',
  };
  const id = app.appId || app.clientId;
  if (!id && !app.privateKey) return undefined;
  if (!id)
    throw new ForgeError(
      'invalid-option',
      `a GitHub App private key needs the App's id or client id (${APP_ID_ENV} or ${APP_CLIENT_ID_ENV})`,
    );
  if (!app.privateKey.includes('PRIVATE KEY-----')) {
    throw new ForgeError(
      'invalid-option',
      `the GitHub App ${id} needs its private key, in PEM (${APP_PRIVATE_KEY_ENV}): it was not given, or is not a PEM key`,
    );
  }
  return app;
}

export interface TokenSource {
  /** What a refusal names ("GITHUB_TOKEN", "the GitHub App 123's installation token for org"). */
  nameFor(owner: string | undefined): string;
  /** The token for a repository of `owner` (`repo` finds the App's installation). */
  tokenFor(owner: string, repo: string): Promise<string>;
  /** The token held now for `owner`, if it is still good (git asks synchronously). */
  cachedFor(owner: string): string | undefined;
  readonly app: boolean;
}

/** A single token for every repository. */
export function singleToken(token: string, name: string): TokenSource {
  return { nameFor: () => name, tokenFor: async () => token, cachedFor: () => token, app: false };
}

/** Renewed this long before it expires (a job's pushes and requests then never meet an expired token). */
const RENEW_BEFORE_MS = 10 * 60_000;

export function appTokens(
  app: GitHubAppCredentials,
  options: { apiUrl: string; clock: ForgeClock; onToken?: ((token: string) => void) | undefined },
): TokenSource {
  const id = (app.appId || app.clientId)!;
  const bare = new Octokit({ baseUrl: options.apiUrl, userAgent: USER_AGENT });
  bare.hook.before('request', documentedHeaders);
  const auth = createAppAuth({ appId: id, privateKey: app.privateKey, request: bare.request });
  const held = new Map<string, { installationId: number; token: string; expiresAt: number }>();
  const missing = new Map<string, Promise<never>>();
  const pending = new Map<string, Promise<string>>();
  const name = (owner: string | undefined) => `the GitHub App ${id}'s installation token${owner ? ` for ${owner}` : ''}`;

  async function mint(owner: string, repo: string): Promise<string> {
    let installationId = held.get(owner.toLowerCase())?.installationId;
    if (installationId === undefined) {
      const jwt = (await auth({ type: 'app' })).token;
      try {
        const found = await bare.request('GET /repos/{owner}/{repo}/installation', {
          owner,
          repo,
          headers: { authorization: `bearer ${jwt}` },
        });
        installationId = (found.data as { id: number }).id;
      } catch (error) {
        if ((error as { status?: number }).status === 404) {
          throw new ForgeError(
            'missing-installation',
            `the GitHub App ${id} is not installed on ${owner} (looked up through ${owner}/${repo}): install it on ${owner}, with access to the repositories kdelta writes to`,
          );
        }
        throw new ForgeError(
          githubErrorCode(error),
          describeGitHubError(error, `find the GitHub App ${id}'s installation for ${owner}/${repo}`, name(owner), owner),
        );
      }
    }
    let minted: { token: string; expiresAt: string };
    try {
      minted = (await auth({ type: 'installation', installationId, refresh: true })) as { token: string; expiresAt: string };
    } catch (error) {
      throw new ForgeError(
        githubErrorCode(error),
        describeGitHubError(error, `make an installation token of the GitHub App ${id} for ${owner}`, name(owner), owner),
      );
    }
    options.onToken?.(minted.token);
    held.set(owner.toLowerCase(), { installationId, token: minted.token, expiresAt: Date.parse(minted.expiresAt) });
    return minted.token;
  }

  const fresh = (owner: string) => {
    const h = held.get(owner.toLowerCase());
    return h && h.expiresAt - options.clock.now() > RENEW_BEFORE_MS ? h.token : undefined;
  };

  return {
    app: true,
    nameFor: name,
    cachedFor: fresh,
    async tokenFor(owner, repo) {
      const key = owner.toLowerCase();
      const now = fresh(owner);
      if (now) return now;
      const refused = missing.get(key);
      if (refused) return refused;
      let p = pending.get(key);
      if (!p) {
        p = mint(owner, repo).finally(() => pending.delete(key));
        pending.set(key, p);
        p.catch((error: unknown) => {
          // neither a missing nor a suspended installation changes within a run: asked once per owner
          if (error instanceof ForgeError && (error.code === 'missing-installation' || error.code === 'installation-suspended'))
            missing.set(key, Promise.reject(error));
          missing.get(key)?.catch(() => {});
        });
      }
      return p;
    },
  };
}
