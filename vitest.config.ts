import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Integration tests bind loopback ports and spawn processes; on a 2-core machine a few forks is the sweet spot.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          // The unit tests share worker processes and the modules loaded in them, rather than a fresh process per
          // file: that start-up was most of their time. No unit test sets process-wide state that outlives it.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          // Builds the CLI once for the tests that spawn it (test/support/spawn-cli.ts); stops the API servers that
          // the envtest files of each worker share (test/envtest/shared-servers.ts).
          globalSetup: ['test/support/build-cli.ts', 'test/envtest/shared-servers.ts'],
        },
      },
    ],
  },
});
