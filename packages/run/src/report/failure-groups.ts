/**
 * One failure message, however many variants share it. A fleet whose token was refused, or whose
 * catalogue function fails alike everywhere, fails two hundred variants with one message: the
 * table, the dashboard and `kdelta proposals` print it once, with the variants it affects,
 * counted, instead of once per row. A message only one variant has stays on that variant's row.
 */

export interface FailureGroup {
  /** The message, as the rows would have shown it. */
  readonly message: string;
  /** Who has it (`<variant> → <downstream>`, a proposal's branch...), in the order first met. */
  readonly members: readonly string[];
  /** The number the rows refer to it by: `[1]`, `[2]`... */
  readonly number: number;
}

/** Variants named on a group's line before the rest are counted only. */
export const MAX_GROUP_MEMBERS = 5;

/**
 * The messages shared by `minMembers` or more items (default two), most shared first (then in the
 * order first met); `groupOf` finds an item's group by its message.
 */
export function groupFailures(
  items: readonly { readonly message: string; readonly member: string }[],
  minMembers = 2,
): {
  readonly groups: readonly FailureGroup[];
  groupOf(message: string): FailureGroup | undefined;
} {
  const byMessage = new Map<string, string[]>();
  for (const { message, member } of items) byMessage.set(message, [...(byMessage.get(message) ?? []), member]);
  const shared = [...byMessage.entries()]
    .filter(([, members]) => members.length >= minMembers)
    // a stable sort: equal counts keep the order first met
    .sort((a, b) => b[1].length - a[1].length);
  const groups = shared.map(([message, members], i) => ({ message, members, number: i + 1 }));
  const index = new Map(groups.map((g) => [g.message, g]));
  return { groups, groupOf: (message) => index.get(message) };
}

/** "3 variant(s): a → c1, b → c2, c → c3" (`noun`: what a member is), the first few named, the rest counted. */
export function groupMembers(group: FailureGroup, noun = 'variant', max = MAX_GROUP_MEMBERS): string {
  const named = group.members.slice(0, max);
  const more = group.members.length - named.length;
  return `${group.members.length} ${noun}(s): ${named.join(', ')}${more > 0 ? `, …and ${more} more` : ''}`;
}

/** The lines under a table: one per shared message, `[n] message — N variant(s): …`. */
export function failureGroupLines(groups: readonly FailureGroup[], noun = 'variant'): string[] {
  return groups.map((g) => `  [${g.number}] ${g.message} — ${groupMembers(g, noun)}`);
}
