import type { RepoLocation } from './url.js';

/**
 * A token for one git server (`https://ghes.example.com=<token>`): what reads repositories on a
 * server other than the forge's own, such as an upstream on a GitHub Enterprise Server read from
 * a github.com workflow. It goes only to that server's repositories the user named or listed (the
 * same rule as every credential: {@link SourceTrust}), never to another host.
 */
export interface ServerToken {
  /** The server's origin, lower case: `https://ghes.example.com` or `https://host:8443`. */
  readonly server: string;
  readonly token: string;
}

/** The environment variable of server tokens: one `<server>=<token>` a line (or comma separated). */
export const SERVER_TOKENS_ENV = 'KDELTA_SERVER_TOKENS';

/** How the user gives server tokens, for the messages that name the setting. */
export const SERVER_TOKENS_SETTING = `${SERVER_TOKENS_ENV} (kdelta run's --server-token, the Action's server-tokens input)`;

/** What a server token is called when its server refuses it (never its value). */
export const serverTokenName = (server: string): string => `the server token for ${server} (${SERVER_TOKENS_SETTING})`;

/**
 * One `<server>=<token>` entry, or why it is not one. The problem never holds the token: it names
 * the server part only, as it may be printed.
 */
export function parseServerToken(entry: string): ServerToken | string {
  const text = entry.trim();
  const at = text.indexOf('=');
  if (at < 0) return 'is not <server>=<token> (https://ghes.example.com=<token>): it has no "="';
  const serverText = text.slice(0, at).trim();
  const token = text.slice(at + 1).trim();
  if (serverText === '') return 'names no server before "=" (https://ghes.example.com=<token>)';
  const server = serverOrigin(serverText);
  if (typeof server !== 'string' || server.startsWith('!')) {
    return `has the server "${serverText}", ${typeof server === 'string' ? server.slice(1) : 'which is not a URL'}`;
  }
  if (token === '') return `gives "${server}" an empty token (is its secret set in this repository?)`;
  if (/\s/.test(token)) return `gives "${server}" a token with a blank in it`;
  return { server, token };
}

/** A server's origin, or `!` and why it is not one: https only, no path, no credentials. */
function serverOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return '!which is not a URL: write https://host or https://host:port';
  }
  if (url.protocol !== 'https:') return '!which is not https: a token travels over https only';
  if (url.username || url.password) return '!which has credentials in it: the token goes after "="';
  if (url.pathname.replace(/\/+$/, '') !== '' || url.search || url.hash) {
    return '!which has a path: name the whole server (https://host), the repositories are listed in credential-repositories';
  }
  return url.origin.toLowerCase();
}

/**
 * Every entry of `lines` (blank ones skipped) as server tokens, or the first problem naming its
 * line (1-based, as `where` shows it: "line 2"). One server given twice is a problem: which token
 * is meant cannot be told.
 */
export function parseServerTokens(lines: readonly string[]): { readonly tokens: readonly ServerToken[] } | { readonly problem: string } {
  const tokens: ServerToken[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const parsed = parseServerToken(line);
    if (typeof parsed === 'string') return { problem: `line ${i + 1} ${parsed}` };
    if (tokens.some((t) => t.server === parsed.server)) return { problem: `line ${i + 1} gives "${parsed.server}" a second token` };
    tokens.push(parsed);
  }
  return { tokens };
}

/**
 * The values to mask in a workflow log, from the text as given, before (and whether or not) it
 * parses: whatever follows the first `=` of every line.
 */
export function serverTokenSecrets(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((line) => (line.includes('=') ? line.slice(line.indexOf('=') + 1).trim() : ''))
    .filter((value) => value !== '');
}

/** The token given for the server `location` is on (same scheme, host and port), if any. */
export function tokenOfServer(tokens: readonly ServerToken[], location: RepoLocation): ServerToken | undefined {
  if (location.kind !== 'https') return undefined;
  let origin: string;
  try {
    origin = new URL(location.url).origin.toLowerCase();
  } catch {
    return undefined;
  }
  return tokens.find((t) => t.server === origin);
}
