import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', cli: 'src/cli.ts', main: 'src/cli/main.ts' },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts', cli: 'src/cli.ts' } },
  // One copy of each class across the entries (`instanceof` holds whichever entry made it).
  splitting: true,
  sourcemap: true,
  target: 'node20',
  removeNodeProtocol: false,
  clean: false,
  // The client is a dependency, resolved at run time: the collector uses the installed one.
  external: ['batched-analytics'],
});
