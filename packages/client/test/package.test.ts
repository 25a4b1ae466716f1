import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
