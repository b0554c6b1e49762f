import { SENT_CREDENTIALS_ENV } from './exec.js';
import { serverTokenName } from './server-tokens.js';
import { credentialsAllowed, serverTokenFor, type SourceTrust } from './trust.js';
import type { RepoLocation, UrlCredentials } from './url.js';

export interface Credentials {
  /** Environment for git (a scoped `http.extraHeader` passed through GIT_CONFIG_*, never argv). */
  readonly env: Readonly<Record<string, string>>;
  /** Values to scrub from anything printed. */
  readonly secrets: readonly string[];
  /** The user's credentials were held back: package content named the repository and the user did not. */
  readonly withheld?: boolean;
}

/**
 * Credentials for an http(s) repository: the user and password taken out of its URL if it had
 * them, else for https `token` if given, else KDELTA_GIT_TOKEN, else GITHUB_TOKEN for github.com.
 * They travel to git in the environment as an `Authorization` header scoped to the repository's
 * origin (never on the command line, where `ps` would show them, and never in a file or in the
 * URL git stores). Without any, git's own credential helpers and ssh agent apply unchanged.
 *
 * `trust.tokenFor` gives the run's own token for a repository (the forge's, for its server): it
 * is used as `token` is, on the hosts `trust` holds only.
 *
 * With `trust` (the repository was named by package content, not by the user), a host the user
 * did not name gets none of the user's credentials: no token, no `credentials` given for it, and
 * git's credential helpers and configured extra headers are switched off for its origin. Only
 * credentials written into the content's own URL (`urlCredentials` from `repo` itself) go there.
 */
export function credentialsFor(
  location: RepoLocation,
  options: {
    token?: string | undefined;
    /** Credentials written into the repository URL itself. */
    urlCredentials?: UrlCredentials | undefined;
    /** The user's credentials for this repository (used when the URL carries none). */
    userCredentials?: UrlCredentials | undefined;
    env?: Readonly<Record<string, string | undefined>>;
    trust?: SourceTrust | undefined;
    /** What `token` is, for the message when the server refuses it ("the `token` input"). */
    tokenName?: string | undefined;
  } = {},
): Credentials {
  const env = options.env ?? process.env;
  const fromUrl = options.urlCredentials ?? options.userCredentials;
  // every credential around is scrubbed from output, whether or not it is sent
  // The run's own token for this repository (see SourceTrust.tokenFor), sent only if its host is trusted.
  // else the token given for the repository's server (KDELTA_SERVER_TOKENS), on the same terms
  const serverToken = options.trust ? serverTokenFor(options.trust, location) : undefined;
  const runToken = options.token ?? options.trust?.tokenFor?.(location.url) ?? serverToken?.token;
  const serverTokens = (options.trust?.serverTokens ?? []).map((t) => t.token);
  const known = [
    runToken,
    ...serverTokens,
    env.KDELTA_GIT_TOKEN,
    env.GITHUB_TOKEN,
    env.GH_TOKEN,
    ...(fromUrl ? urlSecrets(fromUrl) : []),
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
  // a repository on this machine takes no credential: there is nothing to withhold, and git's own
  // word ("does not appear to be a git repository") is the right one when it is missing
  const remote = location.kind !== 'local' && location.kind !== 'file';
  if (remote && options.trust && !credentialsAllowed(options.trust, location)) {
    return { env: withoutUserCredentials(location, options.urlCredentials, env), secrets: known, withheld: true };
  }
  if (location.kind !== 'https' && location.kind !== 'http') return { env: {}, secrets: known };
  let origin: URL;
  try {
    origin = new URL(location.url);
  } catch {
    return { env: {}, secrets: known };
  }
  const scope = `${origin.protocol}//${origin.host}/`;
  const config: [string, string][] = [];
  const givenName = options.token
    ? options.tokenName
    : (options.trust?.tokenName?.(location.url) ??
      (serverToken && runToken === serverToken.token ? serverTokenName(serverToken.server) : undefined));
  const runTokenName = givenName ?? `the token kdelta was given for ${origin.host}`;
  let sent: string | undefined;
  if (fromUrl && fromUrl.password === '') {
    // A user name alone: git gets it as the URL would have given it, its helpers supply the rest.
    config.push([`credential.${scope}.username`, fromUrl.username]);
  } else if (fromUrl) {
    config.push([`http.${scope}.extraHeader`, basicHeader(`${fromUrl.username}:${fromUrl.password}`)]);
    sent = 'the credentials given with the repository URL';
  } else if (location.kind === 'https') {
    // An environment token is never sent over plain http.
    const github = origin.hostname === 'github.com';
    const [token, name] = runToken
      ? [runToken, runTokenName]
      : env.KDELTA_GIT_TOKEN
        ? [env.KDELTA_GIT_TOKEN, 'KDELTA_GIT_TOKEN']
        : github && env.GITHUB_TOKEN
          ? [env.GITHUB_TOKEN, 'GITHUB_TOKEN']
          : github && env.GH_TOKEN
            ? [env.GH_TOKEN, 'GH_TOKEN']
            : [undefined, undefined];
    if (token) {
      config.push([`http.${scope}.extraHeader`, basicHeader(`x-access-token:${token}`)]);
      sent = name;
    }
  } else if (runToken && isLoopback(origin.hostname)) {
    // Plain http only to this machine (a local server such as a test GitHub), and only the run's own token.
    config.push([`http.${scope}.extraHeader`, basicHeader(`x-access-token:${runToken}`)]);
    sent = runTokenName;
  }
  const out = configEnv(config, env);
  // Not git's: read back by runGit, so that a refusal names what was sent (never its value).
  if (sent) out[SENT_CREDENTIALS_ENV] = sent;
  return { env: out, secrets: known };
}

/**
 * For a repository the user did not name: over ssh, none of the user's keys; over http(s), git's
 * credential helpers and any configured extra header are reset (an empty value empties git's list), so nothing of the user's travels there;
 * the URL's own credentials, if it carried any, are all it gets. Helpers are reset for the whole
 * origin (git applies every matching `credential.<url>` in order, and ours come last); headers for
 * the repository's own URL, as specific as any `http.<url>.extraHeader` that matches it, since git
 * skips a less specific one (the origin-wide header a CI checkout leaves behind is reset as well).
 */
function withoutUserCredentials(
  location: RepoLocation,
  fromUrl: UrlCredentials | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  if (location.kind === 'ssh') return { GIT_SSH_COMMAND: SSH_WITHOUT_KEYS };
  if (location.kind !== 'https' && location.kind !== 'http') return {};
  let origin: URL;
  try {
    origin = new URL(location.url);
  } catch {
    return {};
  }
  const scope = `${origin.protocol}//${origin.host}/`;
  const repository = `${origin.protocol}//${origin.host}${origin.pathname}`;
  const config: [string, string][] = [
    [`credential.${scope}.helper`, ''],
    [`http.${scope}.extraHeader`, ''],
    [`http.${repository}.extraHeader`, ''],
  ];
  if (fromUrl && fromUrl.password !== '') {
    config.push([`http.${repository}.extraHeader`, basicHeader(`${fromUrl.username}:${fromUrl.password}`)]);
  }
  return configEnv(config, env);
}

/**
 * ssh for a repository the user did not name: none of the user's keys (no agent, no key file, no
 * ssh configuration that names one) and no prompt. A server that wants a key refuses it, and the
 * refusal names the setting that would allow it.
 */
const SSH_WITHOUT_KEYS = 'ssh -F /dev/null -o IdentityAgent=none -o IdentitiesOnly=yes -o IdentityFile=/dev/null -o BatchMode=yes';

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

const basicHeader = (pair: string) => `Authorization: Basic ${Buffer.from(pair).toString('base64')}`;

/** git configuration through the environment (after any the caller's environment already sets). */
function configEnv(entries: readonly [string, string][], env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  if (entries.length === 0) return {};
  const before = Number(env.GIT_CONFIG_COUNT ?? '0') || 0;
  const out: Record<string, string> = { GIT_CONFIG_COUNT: String(before + entries.length) };
  entries.forEach(([key, value], i) => {
    out[`GIT_CONFIG_KEY_${before + i}`] = key;
    out[`GIT_CONFIG_VALUE_${before + i}`] = value;
  });
  return out;
}

/**
 * What to scrub for credentials from a URL: the password and the `user:password` pair (whose
 * base64 is the header), or a lone user name, which is then most likely a token.
 */
function urlSecrets(credentials: UrlCredentials): string[] {
  if (credentials.password === '') return [credentials.username, `${credentials.username}:`];
  return [credentials.password, `${credentials.username}:${credentials.password}`];
}
