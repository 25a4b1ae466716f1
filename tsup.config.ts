import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts', webhooks: 'src/webhooks/index.ts' },
    format: ['esm', 'cjs'],
    // Shared chunks in CJS too, so both entries share one copy of each class (`instanceof ConfigError`
    // holds whichever entry threw it); ESM splits by default.
    splitting: true,
    dts: true,
    // The CLI's build below writes into the same folder, at the same time.
    clean: ['!cli.js', '!cli.js.map'],
    sourcemap: true,
    target: 'node20',
    // p-retry 7 is ESM-only: bundle it (and its one dependency) so `require()` of the CJS build works.
    noExternal: ['p-retry', 'is-network-error'],
  },
  {
    // The `batched-analytics` executable: ESM only, nothing imports it.
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
]);
