import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // Every workspace's tests, and the repo's own (examples, docs).
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // The JSON report lets .ci/run print a plain "N passed, N failed" line; the last reporter
    // says on the console why tests were skipped.
    reporters: ['default', 'json', './test/skip-reporter.ts'],
    outputFile: { json: '.tmp/vitest-report.json' },
    testTimeout: 20_000,
  },
});
