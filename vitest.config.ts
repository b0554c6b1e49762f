import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources in tests (the `kdelta-source`
// export condition), so `vitest run` needs no build except for the tests that spawn the CLI.
export default defineConfig({
  resolve: { conditions: ['kdelta-source'] },
  ssr: { resolve: { conditions: ['kdelta-source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
