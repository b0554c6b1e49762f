import { availableParallelism } from 'node:os';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The test files that take longest (seconds in CI's JSON report), slowest first. On a clean clone
 * vitest knows no durations and starts larger files first, so a short file that runs long (kpt's
 * scenarios are data) started last and ran alone while the other core idled. These start first;
 * a file missing from the list costs at most that tail.
 */
const SLOWEST_FILES = [
  'packages/cli/src/pkg/conformance.test.ts',
  'packages/action/src/preview.test.ts',
  'packages/cli/src/pkg/crash.test.ts',
  'packages/cli/test/run/run.test.ts',
  'packages/cli/test/run/github-run.test.ts',
  'packages/cli/src/commands/write-crash.test.ts',
  'packages/cli/test/hostile-content.test.ts',
  'packages/run/test/scenarios/conflict-ticks.test.ts',
  'packages/run/test/scenarios/dashboard.test.ts',
  'packages/action/src/github.test.ts',
];

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const i = SLOWEST_FILES.findIndex((f) => spec.moduleId.endsWith(f));
      return i === -1 ? SLOWEST_FILES.length : i;
    };
    // a stable sort: the rest keep vitest's own order
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

// Workspace packages resolve to their TypeScript sources in tests (the `kdelta-source`
// export condition), so `vitest run` needs no build except for the tests that spawn the CLI.
export default defineConfig({
  resolve: { conditions: ['kdelta-source'] },
  ssr: { resolve: { conditions: ['kdelta-source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // A test file spends much of its time waiting for the git (and kdelta) processes it starts,
    // or for GitHub's pacing: one file more than the cores keeps every core busy (on 2 cores, the
    // suite took 233 s with 2 files at a time and 172 s with 3).
    maxWorkers: availableParallelism() + 1,
    // A worker keeps the modules it loaded for its next file: importing them again for each of
    // ~140 files cost more than a tenth of the suite. No test mocks modules or leaves globals
    // changed; what shared test modules keep per file is released by the setup file.
    isolate: false,
    setupFiles: ['./vitest.setup.ts'],
    sequence: { sequencer: SlowestFirst },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
