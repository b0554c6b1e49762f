import { inert } from '../markdown.js';
import type { RenderFailureReport } from '../jobs/render.js';
import type { UpstreamChanges } from '../jobs/upstream-changes.js';
import type { ProposalUpstream } from './proposal-metadata.js';
import { notReadySection, renderFailureSection } from './proposal-body.js';
import { upstreamSection } from './upstream-section.js';

/** The parts of a group's proposal (policy/groups.ts) that a proposal of one variant does not have. */

/** Text from a package or a downstream as inline code. */
function code(text: string): string {
  return inert(text, 'code');
}

/** One package of a group's proposal (policy/groups.ts), as its section of the body says it. */
export interface GroupMemberSection {
  readonly variant: string;
  /** The package directory in the downstream repository. */
  readonly directory: string;
  readonly upstream?: ProposalUpstream | undefined;
  /** Its own proposal's title and opening paragraph (kdelta's text, strangers' parts already inert). */
  readonly title: string;
  readonly summary: string;
  readonly conflicts: number;
  readonly renderFailure?: RenderFailureReport | undefined;
  readonly notReady?: readonly { readonly type: string; readonly message?: string | undefined }[] | undefined;
  readonly compareUrl?: string | undefined;
  readonly upstreamChanges?: UpstreamChanges | undefined;
}

/**
 * A group proposal's section for one of its packages: the parts a proposal of that variant alone
 * would open with (its summary, a failed render, unmet readiness gates, what upstream changed, in
 * one line) and where it comes from. The conflicts of every package are in the body's one table
 * (their files named from the repository's root), so that its boxes work as on any proposal.
 */
export function groupMemberSection(m: GroupMemberSection): string[] {
  const lines = [`### Package ${code(m.directory || '/')} (variant ${code(m.variant)})`, '', `**${inert(m.title)}**`, '', m.summary, ''];
  if (m.renderFailure) lines.push(...renderFailureSection(m.renderFailure));
  if (m.notReady && m.notReady.length > 0) lines.push(...notReadySection(m.notReady));
  lines.push(...upstreamSection(m.upstreamChanges, false));
  if (m.upstream) {
    lines.push(
      `- upstream: ${code(m.upstream.repo)} at ${code(m.upstream.ref)}${m.upstream.reason ? ` (${inert(m.upstream.reason)})` : ''}`,
      `- commit: ${m.upstream.oldCommit && m.upstream.oldCommit !== m.upstream.commit ? `${code(m.upstream.oldCommit.slice(0, 12))} → ` : ''}${code(m.upstream.commit.slice(0, 12))}`,
    );
    if (m.compareUrl) lines.push(`- upstream changes: [compare](${m.compareUrl})`);
  }
  lines.push(`- conflicts: ${m.conflicts}`, '');
  return lines;
}

/**
 * A variant's own proposal, closed because its package is now proposed in a group's: the body
 * says so under its title (the metadata block stays the last line).
 */
export function withSupersededNote(body: string, by: string): string {
  const line = `> **Superseded**: this package is now proposed together with the other packages of its update policy in ${by}; kdelta closed this proposal. Its branch is left as it is.\n\n`;
  const title = /^## .*\r?\n\r?\n/.exec(body);
  return title ? `${title[0]}${line}${body.slice(title[0].length)}` : `${line}${body}`;
}
