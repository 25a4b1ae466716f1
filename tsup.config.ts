import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // p-retry 7 is ESM-only: bundle it (and its one dependency) so `require()` of the CJS build works.
  noExternal: ['p-retry', 'is-network-error'],
});
