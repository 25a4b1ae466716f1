// Bundles a matrix entry with the built package the way edge bundlers do (wrangler and Vercel use
// esbuild): one file, the runtime's export conditions, Node built-ins left to the runtime.
import { build } from 'esbuild';

/** @returns the bundle's code. */
export async function bundle(entry, { format, conditions, globalName }) {
  const { outputFiles } = await build({
    entryPoints: [new URL(entry, import.meta.url).pathname],
    bundle: true,
    write: false,
    format,
    globalName,
    platform: 'neutral',
    conditions,
    mainFields: ['browser', 'module', 'main'],
    external: ['node:*'],
    logLevel: 'error',
  });
  return outputFiles[0].text;
}
