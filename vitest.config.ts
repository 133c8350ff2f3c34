import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Integration tests bind loopback ports and spawn processes; on a 2-core machine a few forks is the sweet spot.
    pool: 'forks',
    maxWorkers: 2,
    // Builds the CLI once for the tests that spawn it (test/support/spawn-cli.ts); stops the API servers that the
    // envtest files of each worker share (test/envtest/shared-servers.ts).
    globalSetup: ['test/support/build-cli.ts', 'test/envtest/shared-servers.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
