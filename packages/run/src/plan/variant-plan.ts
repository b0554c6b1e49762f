import type { KubeObject, PackageVariant } from '@kdelta/variant-engine';
import type { RepositorySpec, Source } from '../control/control-source.js';

/** One variant as the plan stage made it: what every later stage (policies, gates, jobs) reads of it. */

export type UpstreamPolicy = 'pinned' | 'highest-semver';

export interface VariantPlan {
  readonly name: string;
  /** The variant with Porch's defaults (adoptNone, delete). */
  readonly variant: PackageVariant;
  /** The document it comes from (the set's, for a generated variant). */
  readonly source: Source;
  /** Where the upstream fields are in that document (`spec.upstream`). */
  readonly upstreamField: string;
  /** The PackageVariantSet that generated it (a policy's selector may name it); absent for a PackageVariant of its own. */
  readonly set?: string | undefined;
  readonly upstream: {
    readonly repository: RepositorySpec;
    /** URL or absolute path of the repository. */
    readonly url: string;
    readonly package: string;
    /** Directory of the package in the repository (`<spec.git.directory>/<package>`). */
    readonly directory: string;
    readonly revision?: string | undefined;
    readonly policy: UpstreamPolicy;
    /** Following releases (no revision, or highest-semver): pre-release tags count too. */
    readonly prereleases: boolean;
  };
  readonly downstream: {
    readonly repository: RepositorySpec;
    readonly url: string;
    readonly branch: string;
    readonly package: string;
    readonly directory: string;
  };
  /** The objects of the variant's namespace (injection sources). */
  readonly objects: readonly KubeObject[];
}
