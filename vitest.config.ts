import { defineConfig } from 'vitest/config';

// Every project: forks (integration tests bind loopback ports, spawn processes and set process-wide state).
const common = { pool: 'forks', testTimeout: 20_000, hookTimeout: 20_000 } as const;

export default defineConfig({
  test: {
    // Four workers on a 2-core machine: most test time is waiting (on timers, child processes, servers, sockets),
    // so two workers left the cores half idle; beyond four the run is bound by CPU (bench/results has figures).
    maxWorkers: 4,
    // Builds the CLI once for the tests that spawn it (test/support/spawn-cli.ts); stops the API servers that
    // envtest files share (test/envtest/shared-servers.ts). Once for the run, for every project.
    globalSetup: ['test/support/build-cli.ts', 'test/envtest/shared-servers.ts'],
    projects: [
      {
        // Files that share worker processes and the modules loaded in them, rather than a fresh process per file (a
        // process start and module loading per file cost about as much CPU as these files' tests): none leaves
        // process-wide state behind (environment, global dispatcher, CA certificates and listeners are restored).
        test: { ...common, name: 'shared', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], exclude: ['test/providers/**', 'test/kubernetes/**', 'test/envtest/**'], isolate: false },
      },
      {
        // A fresh process per file: these set proxies, credentials and metadata hosts in the environment for identity
        // libraries that may keep what they read at first use; the envtest files drive servers and processes.
        test: { ...common, name: 'isolated', include: ['test/providers/**/*.test.ts', 'test/kubernetes/**/*.test.ts', 'test/envtest/**/*.test.ts'] },
      },
    ],
  },
});
