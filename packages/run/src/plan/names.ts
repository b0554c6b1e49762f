import { repositoryIdentity } from '@kdelta/git-source';
import type { ProposalTarget } from '../forges/forge.js';

/**
 * Names that end up in branches, record files and package directories. A variant's name is a
 * Kubernetes object name, so `<prefix><name>` is a branch git accepts and a record file name that
 * no other variant shares; two proposals that would still share a branch, a record or a package
 * directory are found here before anything is pushed.
 */

const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS_SUBDOMAIN = new RegExp(`^${DNS_LABEL}(\\.${DNS_LABEL})*$`);

/** Why `name` is not a Kubernetes object name (a DNS-1123 subdomain); undefined when it is one. */
export function objectNameProblem(name: string): string | undefined {
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    return `"${name}" is not a valid Kubernetes object name (RFC 1123 subdomain: at most 253 characters, lowercase letters, digits, "-" and ".", starting and ending with a letter or digit)`;
  }
  return undefined;
}

/** One proposal a run is about to make, and what it is called in messages. */
export interface PlannedProposal {
  /** `variant "web"`, `package update "update-web"`... */
  readonly label: string;
  readonly target: ProposalTarget;
  /** The package directory it writes in the downstream repository. */
  readonly directory: string;
  /** The group proposal it is part of (policy/groups.ts): its members share the branch and the record, not a directory. */
  readonly group?: string | undefined;
}

export interface Collision {
  readonly first: PlannedProposal;
  readonly second: PlannedProposal;
  /** What they would share: `branch "kdelta/web" of <repo>`... */
  readonly what: string;
}

/**
 * Pairs of proposals that would share a head branch of one repository, a forge record (`recordOf`,
 * the forge's own key) or a package directory of one repository: each would overwrite the other.
 * Repositories are compared by {@link repositoryIdentity}, so two spellings of one URL are one.
 */
export function findCollisions(
  planned: readonly PlannedProposal[],
  recordOf?: ((target: ProposalTarget) => string | undefined) | undefined,
): Collision[] {
  const seen = new Map<string, PlannedProposal>();
  const out: Collision[] = [];
  for (const p of planned) {
    const repo = repositoryIdentity(p.target.repo);
    const keys: [string, string][] = [
      [`branch\0${repo}\0${p.target.head}`, `branch "${p.target.head}" of ${repo}`],
      [`directory\0${repo}\0${p.directory}`, `package directory "${p.directory || '.'}" of ${repo}`],
    ];
    const record = recordOf?.(p.target);
    if (record !== undefined) keys.push([`record\0${record}`, `proposal record ${record}`]);
    for (const [key, what] of keys) {
      const before = seen.get(key);
      const sameGroup = p.group !== undefined && before?.group === p.group && !key.startsWith('directory\0');
      if (before && before !== p && !sameGroup) {
        out.push({ first: before, second: p, what });
        break;
      }
      seen.set(key, p);
    }
  }
  return out;
}

export function describeCollision(c: Collision): string {
  return `${c.first.label} and ${c.second.label} would share the ${c.what}: each would overwrite the other's proposal`;
}
