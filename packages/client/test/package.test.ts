import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { VERSION } from '../src/index.js';
import { moduleGraph, PG_IMPORT } from '../../../test/helpers/module-graph.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));

it('VERSION matches package.json', () => {
  expect(VERSION).toBe(pkg.version);
});

// npm links a bin only if its file exists when `npm ci` runs, before a clone's first build: the
// bin is a committed launcher of the build, not a file of dist/.
it('its executable is a committed launcher that runs the built CLI', async () => {
  const bin = pkg.bin['batched-analytics'] as string;
  expect(bin).not.toMatch(/^(\.\/)?dist\//);
  const { stdout } = await run(process.execPath, [fileURLToPath(new URL(bin, root)), '--help']);
  expect(stdout).toMatch(/^Usage: batched-analytics <command>/);
});

// Self-reference by package name goes through the exports map, as an installed package would.
it.each([
  ['require', `const a = require('batched-analytics'); console.log(typeof a.Analytics, new a.ValidationError('f', 'm') instanceof a.AnalyticsError)`, []],
  ['import', `const a = await import('batched-analytics'); console.log(typeof a.Analytics, new a.ValidationError('f', 'm') instanceof a.AnalyticsError)`, ['--input-type=module']],
])('the built package loads with %s', async (_, code, flags) => {
  const { stdout } = await run(process.execPath, [...flags, '-e', code], { cwd: root });
  expect(stdout.trim()).toBe('function true');
});

// The CLI is built with the library so that an install holds one copy of the client, not two.
it('the CLI imports the library chunks instead of bundling its own copy', () => {
  const cli = readFileSync(new URL('dist/cli.js', root), 'utf8');
  expect(cli.startsWith('#!/usr/bin/env node\n')).toBe(true);
  expect(cli).toMatch(/from "\.\/chunk-[\w-]+\.js"/);
  expect(cli).not.toContain('function isNetworkError');
});

// The client ships no server: pg and the collector are another package's, loaded by `serve` only
// when that package is installed.
it.each(['dist/index.js', 'dist/index.cjs', 'dist/webhooks.js', 'dist/webhooks.cjs', 'dist/webhooks/verify.js', 'dist/internal.js', 'dist/cli.js'])(
  '%s cannot load pg or the collector',
  (entry) => {
    for (const [file, code] of moduleGraph(root, entry)) {
      expect(code, file).not.toMatch(PG_IMPORT);
      expect(code, file).not.toContain('class JournalStore');
    }
  },
);

it('the package declares no dependency beyond undici, p-retry and debug', () => {
  expect(Object.keys(pkg.dependencies).sort()).toEqual(['debug', 'p-retry', 'undici']);
});

// Two copies of each class exist in one process whenever the ESM and CJS builds both load (a CJS
// dependency beside ESM code), or two installs of the package do: `instanceof` holds across them.
it('instanceof holds across the ESM and CJS builds and across two installs of the package', async () => {
  const copy = mkdtempSync(path.join(tmpdir(), 'second-install-'));
  try {
    cpSync(new URL('dist', root), path.join(copy, 'dist'), { recursive: true });
    writeFileSync(path.join(copy, 'package.json'), JSON.stringify({ ...pkg, name: 'second-install' }));
    symlinkSync(fileURLToPath(new URL('../../node_modules', root)), path.join(copy, 'node_modules'));
    const code = `
      import { createRequire } from 'node:module';
      const cjs = createRequire(import.meta.url)('batched-analytics');
      const esm = await import('batched-analytics');
      const other = await import(${JSON.stringify(pathToFileURL(path.join(copy, 'dist/index.js')).href)});
      const results = [
        new cjs.ConfigError('flushAt', 'm') instanceof esm.AnalyticsError,
        new cjs.ConfigError('flushAt', 'm') instanceof esm.ConfigError,
        new esm.HttpError(500, '') instanceof cjs.DeliveryError,
        new other.ValidationError('f', 'm') instanceof esm.ValidationError,
        new esm.TimeoutError(1) instanceof other.AnalyticsError,
        // What it is not, it is not: a sibling class, a subclass, a plain Error.
        new cjs.ConfigError('flushAt', 'm') instanceof esm.ValidationError,
        new esm.DeliveryError('m') instanceof cjs.HttpError,
        new Error('m') instanceof esm.AnalyticsError,
      ];
      console.log(JSON.stringify(results));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: fileURLToPath(root) });
    expect(JSON.parse(stdout)).toEqual([true, true, true, true, true, false, false, false]);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});
