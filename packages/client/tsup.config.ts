import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';
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
  // Installed by the user when wanted; `serve` imports it at run time (see src/cli/serve.ts).
  external: ['batched-analytics-collector'],
};

const library = {
  index: 'src/index.ts',
  webhooks: 'src/webhooks/index.ts',
  'webhooks/verify': 'src/webhooks/verify.ts',
  internal: 'src/internal.ts',
};

/**
 * The build for runtimes without Node's built-ins (export conditions `workerd`, `edge-light`,
 * `worker`): every module that has a web twin beside it (`bytes.ts` → `bytes.web.ts`) is replaced
 * by the twin. Node, Bun and Deno keep the Node build and its fast paths.
 */
const webTwins: Plugin = {
  name: 'web-twins',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, ({ path: specifier, resolveDir }) => {
      const twin = path.resolve(resolveDir, specifier.replace(/\.js$/, '.web.ts'));
      return existsSync(twin) ? { path: twin } : undefined;
    });
  },
};

export default defineConfig([
  // ESM: the library and the CLI in one build, so `cli.js` imports the library's chunks rather than
  // bundling a second copy of the client (esbuild keeps `main.ts`'s `#!` line).
  { ...shared, entry: { ...library, cli: 'src/cli/main.ts' }, format: ['esm'], dts: { entry: library } },
  { ...shared, entry: library, format: ['cjs'], dts: { entry: library } },
  {
    ...shared,
    entry: { index: 'src/index.ts', webhooks: 'src/webhooks/index.ts' },
    outDir: 'dist/web',
    format: ['esm'],
    platform: 'neutral',
    target: 'es2022',
    esbuildPlugins: [webTwins],
  },
]);
