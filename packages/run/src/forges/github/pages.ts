/**
 * GitHub's pagination as its documentation describes it: what follows a page is the `link`
 * header's `rel="next"` URL, and its absence means the last page. A page's length says nothing
 * (a server may hold fewer items a page than `per_page` asked for), so a short page is never taken
 * for the last one and a full one never makes a guessed request.
 *
 * The next URL is followed only on the API's own origin: the token goes with it, and a header
 * naming another host must not send it there.
 */

/** The `rel="next"` URL of a `link` header, if there is one. */
export function nextLink(link: string | null | undefined): string | undefined {
  if (!link) return undefined;
  // `<url>; rel="next", <url>; rel="last"`: a URL never holds `>`, a rel may list several names
  for (const m of link.matchAll(/<([^>]*)>\s*((?:;\s*[^;,]*)*)/g)) {
    const rel = /;\s*rel\s*=\s*"?([^";,]*)"?/i.exec(m[2] ?? '')?.[1] ?? '';
    if (rel.toLowerCase().split(/\s+/).includes('next')) return m[1];
  }
  return undefined;
}

export type NextPage = { readonly ok: true; readonly url: string | undefined } | { readonly ok: false; readonly error: string };

/**
 * The next page's URL (undefined: this was the last page), resolved against the API's URL, or
 * why it is not followed: a URL on another origin than `apiUrl`'s.
 */
export function nextPageOf(link: string | null | undefined, apiUrl: string): NextPage {
  const next = nextLink(link);
  if (next === undefined) return { ok: true, url: undefined };
  let url: URL;
  try {
    url = new URL(next, `${apiUrl.replace(/\/+$/, '')}/`);
  } catch {
    return { ok: false, error: `the next page's link ${JSON.stringify(next)} is not a URL` };
  }
  const api = new URL(apiUrl);
  if (url.origin !== api.origin) {
    return { ok: false, error: `the next page's link points to ${url.origin}, not to the API at ${api.origin}: not followed` };
  }
  return { ok: true, url: url.href };
}
