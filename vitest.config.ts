import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS and ESM builds; Node (and so Yoga and Pothos) loads the CJS one, Vite
    // would pick the ESM one for our sources. One realm only, or schemas look foreign to each other.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // One embedded database serves every file; files run in parallel on their own databases.
    // Most files wait on servers and the database rather than compute: three at a time on two
    // cores ran the suite in 133 s against 268 s with vitest's default of one (cores - 1).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
