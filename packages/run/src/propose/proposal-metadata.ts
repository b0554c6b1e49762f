import { hiddenJson, inert } from '../markdown.js';

/**
 * A proposal's metadata block: the state a proposal records about itself, hidden on the last line
 * of its body so any forge can carry it. The only writer and the only reader of that block (and of
 * the line saying kdelta turned auto-merge off); the body around it is proposal-body.ts's.
 */

/** The upstream revision a proposal was built from. */
export interface ProposalUpstream {
  readonly repo: string;
  readonly ref: string;
  readonly commit: string;
  /** The commit the downstream had before, for an update. */
  readonly oldCommit?: string | undefined;
  /** Why this ref (`latest release v0.4.1 of catalog/bucket`): what `kdelta proposals` shows. */
  readonly reason?: string | undefined;
}

/** What a group's proposal records of its members: a run with nothing new reports each from it. */
export interface GroupRecord {
  readonly members: readonly string[];
  readonly left: readonly {
    readonly variant: string;
    readonly action: 'failed' | 'not-adopted';
    readonly code?: string | undefined;
    readonly message: string;
  }[];
}

/** What a proposal records about itself, hidden in its body so any forge can carry it. */
export interface ProposalMetadata {
  readonly version: string;
  readonly variant: string;
  readonly fingerprint: string;
  /** The commit the proposal's branch points at, and the base commit it was built on. */
  readonly headCommit: string;
  readonly baseCommit: string;
  readonly upstream?: ProposalUpstream | undefined;
  readonly conflicts: number;
  readonly kind: 'variant' | 'removal' | 'orphan' | 'update' | 'group';
  /** A group's proposal (kind `group`): the variants it proposes, and those left out of it this time, with why. */
  readonly group?: GroupRecord | undefined;
  /** The render failed: the proposal holds the package unrendered (a re-run always renders it again). */
  readonly renderFailed?: boolean | undefined;
  /**
   * kdelta closed this proposal itself, and as what (superseded or no longer needed: `closed`;
   * its content reached the base: `merged`): written in the same request that closes it, so a
   * closed, unmerged proposal without it was closed by a person (declined).
   */
  readonly closedBy?: 'closed' | 'merged' | undefined;
  /** The conflicts decided by a tick on this proposal (their boxes' ids): every rebuild of it applies them again. */
  readonly decided?: readonly string[] | undefined;
  /** The readiness gates not met, and the commits of others the head commit is built on: its status, when a run repairs it. */
  readonly notReady?: readonly string[] | undefined;
  readonly carried?: readonly string[] | undefined;
  /**
   * The head commit's status, posted right after the body that names the commit, did not land:
   * a run with nothing new reads the commit's statuses and posts it. Absent, no run reads them.
   */
  readonly statusMissing?: boolean | undefined;
}

const METADATA = /(?:^|\n)(<!-- kdelta: (\{[^\n]*\}) -->)[ \t\r\n]*$/;

export function renderMetadataBlock(meta: ProposalMetadata): string {
  return `<!-- kdelta: ${hiddenJson(meta)} -->`;
}

/** The metadata block at the end of a body; undefined when it is missing (a cut or edited body) or broken. */
export function parseMetadataBlock(body: string): ProposalMetadata | undefined {
  const m = METADATA.exec(body);
  if (!m) return undefined;
  try {
    const v = JSON.parse(m[2]!) as ProposalMetadata;
    return typeof v === 'object' && v !== null && typeof v.fingerprint === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The body with its metadata block saying kdelta closed it (as `state`); a body without a block is returned as it is. */
export function markClosed(body: string, state: 'closed' | 'merged'): string {
  const meta = parseMetadataBlock(body);
  const m = METADATA.exec(body);
  if (!meta || !m) return body;
  const at = m.index + m[0].indexOf(m[1]!);
  return `${body.slice(0, at)}${renderMetadataBlock({ ...meta, closedBy: state })}${body.slice(at + m[1]!.length)}`;
}

/**
 * Who closed a proposal, from its body: `kdelta` (and as what) when its metadata block says so,
 * `person` when the body is kdelta's but kdelta did not close it, undefined when it is not kdelta's.
 */
export function closedByOf(
  body: string,
): { readonly by: 'kdelta'; readonly state: 'closed' | 'merged' } | { readonly by: 'person' } | undefined {
  const meta = parseMetadataBlock(body);
  if (!meta) return undefined;
  return meta.closedBy === 'closed' || meta.closedBy === 'merged' ? { by: 'kdelta', state: meta.closedBy } : { by: 'person' };
}

// `\r`: a body edited on GitHub's web page comes back with CRLF line ends
const AUTO_MERGE_OFF = /^> \*\*kdelta turned auto-merge off\*\*.*\r?\n\r?\n/m;

/**
 * The body with the line saying kdelta turned its auto-merge off, and why (`reason`, kdelta's own
 * text), under its title; an earlier such line is replaced.
 */
export function withAutoMergeOff(body: string, reason: string): string {
  // the reason names gates and functions of the package: strangers' text
  const line = `> **kdelta turned auto-merge off**: ${inert(reason)}. A person merges it, once reviewed.\n\n`;
  const rest = body.replace(AUTO_MERGE_OFF, '');
  const title = /^## .*\r?\n\r?\n/.exec(rest);
  return title ? `${title[0]}${line}${rest.slice(title[0].length)}` : `${line}${rest}`;
}
