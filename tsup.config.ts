import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  // Shared chunks in CJS too, so both entries share one copy of each class (`instanceof ConfigError`
  // holds whichever entry threw it); ESM splits by default.
  splitting: true,
  sourcemap: true,
  target: 'node20',
  // p-retry 7 is ESM-only: bundle it (and its one dependency) so `require()` of the CJS build works.
  noExternal: ['p-retry', 'is-network-error'],
  // Keep `node:` on built-in imports: Workers (`nodejs_compat`), Deno and edge bundlers know the
  // built-ins by that prefix only.
  removeNodeProtocol: false,
  // `npm run build` empties dist/ first: two builds writing into it at once must not clean it.
  clean: false,
};

const library = { index: 'src/index.ts', webhooks: 'src/webhooks/index.ts', 'webhooks/verify': 'src/webhooks/verify.ts' };

export default defineConfig([
  // ESM: the library and the CLI in one build, so `cli.js` imports the library's chunks rather than
  // bundling a second copy of the client (esbuild keeps `main.ts`'s `#!` line).
  { ...shared, entry: { ...library, cli: 'src/cli/main.ts' }, format: ['esm'], dts: { entry: library } },
  { ...shared, entry: library, format: ['cjs'], dts: { entry: library } },
]);
