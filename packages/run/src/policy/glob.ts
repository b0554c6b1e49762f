/**
 * `*` globs of a policy (variant names, tag names, package names): `*` is any run of characters,
 * everything else is itself. One matcher for every glob a policy or a team's file writes.
 */
export function globMatch(pattern: string, text: string): boolean {
  if (!pattern.includes('*')) return pattern === text;
  const parts = pattern.split('*');
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  // the middle parts in order, each as early as it fits: linear, no backtracking on hostile input
  let at = first.length;
  const end = text.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

export function globMatchAny(patterns: readonly string[], text: string): boolean {
  return patterns.some((p) => globMatch(p, text));
}
