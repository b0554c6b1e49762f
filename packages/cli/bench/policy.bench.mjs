import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchFleet, median, spread, timedRun, write } from './local-fleet.mjs';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'kdelta.js');
const at = process.argv.indexOf('--variants');
const VARIANTS = at > 0 ? Number(process.argv[at + 1]) : 1000;
if (!Number.isInteger(VARIANTS) || VARIANTS < 1) throw new Error(`--variants: a positive whole number (got ${process.argv[at + 1]})`);
const PACKAGES = Math.min(10, VARIANTS);
const REPOS = Math.ceil(VARIANTS / PACKAGES);
const TIMES = 5;
const GOAL = 1.2;

const { root, env, control, controlFiles, mergeAll } = createBenchFleet('policy', REPOS);
const packages = ['web', ...Array.from({ length: PACKAGES - 1 }, (_, i) => `web-${i + 2}`)];
const total = REPOS * PACKAGES;

/** Every variant governed: waves (unlabelled downstreams are in the last), a window always open, limits that hold nothing. */
const POLICY =
  'apiVersion: kdelta.dev/v1alpha1\nkind: UpdatePolicy\nmetadata:\n  name: platform\nspec:\n  updateTypes: [patch, minor, major]\n  minimumReleaseAge: 1d\n  schedule:\n    timeZone: Europe/Berlin\n    windows: ["cron: * * * * *"]\n  limits:\n    openProposals: 100000\n    perHour: 100000\n  rollout:\n    waves: [canary, early, prod]\n';

function kdelta(label) {
  return timedRun({ bin, control, env, label, expectCount: total });
}

const described = (actions) =>
  Object.entries(actions)
    .map(([a, n]) => `${n} ${a}`)
    .join(', ');

/** The control directory with or without the policy (the variants follow web's releases: no revision). */
function controlWith(policy) {
  const files = controlFiles(packages, 'v2');
  files['.kdelta/web.yaml'] = files['.kdelta/web.yaml'].replace('    revision: v2\n', '');
  rmSync(join(control, '.kdelta', 'policy.yaml'), { force: true });
  write(control, policy ? { ...files, '.kdelta/policy.yaml': POLICY } : files);
}

try {
  mkdirSync(control);
  controlWith(false);
  const setup = kdelta('setup');
  console.log(`setup: ${total} variants proposed (${described(setup.actions)}) in ${(setup.ms / 1000).toFixed(2)} s`);
  mergeAll(packages);
  // one run of each first: the merges settled, the policies' reads kept for the timed runs
  kdelta('settle');
  controlWith(true);
  kdelta('warm');
  const without = [];
  const withPolicy = [];
  let seen = {};
  for (let i = 0; i < TIMES; i++) {
    controlWith(false);
    without.push(kdelta('no-op').ms);
    controlWith(true);
    const r = kdelta('no-op, policies');
    withPolicy.push(r.ms);
    seen = r.actions;
  }
  console.log(`${total} variants, nothing new (${described(seen)}), min/median/max of ${TIMES}:`);
  console.log(`  without policies: ${spread(without)}`);
  console.log(`  with policies:    ${spread(withPolicy)}`);
  const ratio = median(withPolicy) / median(without);
  console.log(`with / without (medians): ${ratio.toFixed(2)}× (goal ≤ ${GOAL}×)${ratio > GOAL ? `  ← over the ${GOAL}× goal` : ''}`);
} finally {
  if (process.env.KDELTA_BENCH_KEEP === '1') console.log(`kept: ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
