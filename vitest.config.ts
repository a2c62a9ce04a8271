import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // CLI and install tests spawn node and npm; two workers match CI's two cores.
    maxWorkers: 2,
  },
});
