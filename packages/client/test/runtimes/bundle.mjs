// Bundles a matrix entry with the built package the way edge bundlers do (wrangler and Vercel use
// esbuild): one file, imported by the package's name so that the runtime's export conditions pick
// the build, Node built-ins left to the runtime.
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';

const root = new URL('../..', import.meta.url).pathname;

/** @returns the bundle's code. */
export async function bundle(entry, { format, conditions, globalName }) {
  // `batched-analytics` resolves to this checkout, through its package.json's exports.
  const packages = mkdtempSync(path.join(tmpdir(), 'matrix-packages-'));
  symlinkSync(root, path.join(packages, 'batched-analytics'), 'dir');
  try {
    const { outputFiles } = await build({
      entryPoints: [new URL(entry, import.meta.url).pathname],
      bundle: true,
      write: false,
      format,
      globalName,
      platform: 'neutral',
      conditions,
      mainFields: ['browser', 'module', 'main'],
      nodePaths: [packages],
      external: ['node:*'],
      logLevel: 'error',
    });
    return outputFiles[0].text;
  } finally {
    rmSync(packages, { recursive: true, force: true });
  }
}
