import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Tests that load the machine for a long while: 20,000 messages through three collectors and
 * PostgreSQL, an import of 200,000 lines, a page stalled until ~210 MB are held, a collector killed
 * mid-delivery and recovered. They run after the others, one file at a time, so that their load
 * never lands on the tests that measure time (a rate limit, a timeout, a drain) or memory.
 */
const HEAVY = [
  'packages/collector/test/cli/serve-cluster.test.ts',
  'packages/client/test/cli/import.test.ts',
  'packages/collector/test/debugger/stalled-page.test.ts',
  'packages/collector/test/delivery/recovery.test.ts',
];

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // The JSON report (every project's tests, one run) lets .ci/run print a plain "N passed,
    // N failed" line; the last reporter says on the console why tests were skipped.
    reporters: ['default', 'json', './test/skip-reporter.ts'],
    outputFile: { json: '.tmp/vitest-report.json' },
    testTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          // Every workspace's tests, and the repo's own (examples, docs).
          include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...HEAVY],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'heavy', include: HEAVY, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
