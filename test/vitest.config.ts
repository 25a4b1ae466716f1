import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // Every workspace's tests, and the repo's own (examples, docs).
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // The JSON report lets .ci/run print a plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
    testTimeout: 20_000,
  },
});
