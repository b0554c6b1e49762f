import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources in tests (the `kdelta-source`
// export condition), so `vitest run` needs no build except for the tests that spawn the CLI.
export default defineConfig({
  resolve: { conditions: ['kdelta-source'] },
  ssr: { resolve: { conditions: ['kdelta-source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // A test file spends most of its time waiting for the git (and kdelta) processes it starts,
    // so one file per core keeps every core busy; vitest's default, one less than the cores,
    // left one of a 2-core machine's two idle.
    maxWorkers: availableParallelism(),
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
