import type { Materialize } from '../job.js';
import { getPackageFiles } from '../materialize.js';

// The fleet on disk is @kdelta/test-support's, shared with the Action's tests.
export { createFleet, type Fleet, packageVariant, repository } from '@kdelta/test-support';

/**
 * The test's stand-in for the 3-way update: the upstream package at the resolved commit, replacing
 * the downstream's files (upstream wins). Enough to test everything around it.
 */
export const copyMaterialize: Materialize = async (input) => {
  const files = await getPackageFiles(input);
  return { files, conflicts: [], resources: [], lock: { ...input.upstream } };
};
