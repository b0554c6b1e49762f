import { repoLocation, type ServerToken, serverTokenFor, type SourceTrust, unusedServerTokens } from '@kdelta/git-source';

/**
 * The run's tokens per git server (`server-tokens`), at the two places the run meets them: the
 * read of a repository the control resources name, and the report's warnings. Whether a token may
 * go to a repository is git-source's rule (`serverTokenFor`), decided there once.
 */

/** The server token `url` gets: its server's, when the trust allows that repository; else none. */
export function serverTokenOf(trust: SourceTrust, url: string): ServerToken | undefined {
  try {
    return serverTokenFor(trust, repoLocation(url));
  } catch {
    return undefined; // refused where it is read, with the reason
  }
}

/** A warning per server token that no Repository of the control resources, nor a listed pattern, is on. */
export function serverTokenWarnings(trust: SourceTrust | undefined): string[] {
  return (trust ? unusedServerTokens(trust) : []).map(
    (server) =>
      `server-tokens: a token is given for ${server}, and no Repository of the control resources nor credential-repositories pattern is on it: it is sent nowhere (is the server's address as the Repositories write it?)`,
  );
}
