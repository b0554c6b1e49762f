import type { PackageView } from '@kdelta/kptfile-model';
import type { Conflict, Decision, IdentifiedDocument, ParsedTexts, ResourceReport } from '@kdelta/merge-core';
import type { UpdateStrategy } from '../kptfile.js';

/** One package's three versions, as kpt's updaters receive them. */
export interface UpdateInput {
  /** The local package: the strategies edit its tree. */
  readonly local: PackageView;
  readonly updated: PackageView;
  /** May not exist (a package fetched without a lock). */
  readonly origin: PackageView;
  /** `/` for the root of the update, else the package's path relative to it. */
  readonly relPackagePath: string;
  readonly isRoot: boolean;
  /** Where the merge parses, when the caller reads the same texts after it (see `UpdatePackageTreeOptions.parsed`). */
  readonly parsed?: ParsedTexts | undefined;
  /** Texts the marking scanned, by text: their documents as the merge identifies them (see `addMergeCommentsToTree`). */
  readonly identified?: ReadonlyMap<string, readonly IdentifiedDocument[]> | undefined;
}

/** What happened to a package nested in (or at the root of) an update. */
export type PackageAction =
  /** merged or replaced with its strategy */
  | 'updated'
  /** added upstream: copied in */
  | 'added'
  /** removed upstream and unchanged locally: removed */
  | 'deleted'
  /** removed upstream but changed locally, re-pointed locally, or only local: left as it is */
  | 'kept'
  /** deleted locally: stays deleted */
  | 'ignored'
  /** never fetched upstream: only its Kptfile was merged */
  | 'kptfile-merged'
  /** no longer a package upstream: its Kptfile removed, its files follow upstream */
  | 'unpackaged';

export interface PackageVisit {
  /** Relative to the root of the update (`.` for the root). */
  readonly path: string;
  readonly action: PackageAction;
  readonly strategy?: UpdateStrategy;
}

/** What a strategy did, relative to the package it was given. */
export interface UpdateOutcome {
  /** Conflicts; `package` names the nested package they are in (absent for the package itself). */
  readonly conflicts: readonly (Conflict & { package?: string })[];
  readonly resources: readonly (ResourceReport & { package?: string })[];
  readonly packages: readonly PackageVisit[];
  /** Fields kept as local has them because local pinned them (`# kdelta:local`). */
  readonly decisions: readonly (Decision & { package?: string })[];
}

export const nothing: UpdateOutcome = { conflicts: [], resources: [], packages: [], decisions: [] };

/** Progress lines (kpt's wording) and the packages visited go through this. */
export interface UpdateContext {
  readonly progress: (line: string) => void;
}

/** `outcome` of the package at `rel`, its packages named relative to the package holding it. */
export function within(rel: string, outcome: UpdateOutcome): UpdateOutcome {
  const under = (p: string | undefined) => (p ? `${rel}/${p}` : rel);
  return {
    conflicts: outcome.conflicts.map((c) => ({ ...c, package: under(c.package) })),
    resources: outcome.resources.map((r) => ({ ...r, package: under(r.package) })),
    packages: outcome.packages.map((p) => ({ ...p, path: p.path === '.' ? rel : `${rel}/${p.path}` })),
    decisions: outcome.decisions.map((d) => ({ ...d, package: under(d.package) })),
  };
}

export function combine(outcomes: readonly UpdateOutcome[]): UpdateOutcome {
  return {
    conflicts: outcomes.flatMap((o) => o.conflicts),
    resources: outcomes.flatMap((o) => o.resources),
    packages: outcomes.flatMap((o) => o.packages),
    decisions: outcomes.flatMap((o) => o.decisions),
  };
}
