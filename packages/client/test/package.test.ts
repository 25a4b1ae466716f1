import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { VERSION } from '../src/index.js';

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

// pg is for the collector's PostgreSQL store only: the client, on any runtime (Workers, Edge), must
// never load it, and the CLI loads it only when that store opens.
const PG = /(?:from|import\(|require\()\s*["']pg(?:\/[^"']*)?["']/;

/** Every built module `entry` can load, dynamic imports included. */
function moduleGraph(entry: string): Map<string, string> {
  const modules = new Map<string, string>();
  const visit = (url: URL) => {
    if (modules.has(url.pathname)) return;
    const code = readFileSync(url, 'utf8');
    modules.set(url.pathname, code);
    for (const [, relative] of code.matchAll(/(?:from|import\(|require\()\s*["'](\.{1,2}\/[^"']+)["']/g)) visit(new URL(relative!, url));
  };
  visit(new URL(entry, root));
  return modules;
}

it.each(['dist/index.js', 'dist/index.cjs', 'dist/webhooks.js', 'dist/webhooks.cjs', 'dist/webhooks/verify.js'])('%s cannot load pg', (entry) => {
  for (const [file, code] of moduleGraph(entry)) expect(code, file).not.toMatch(PG);
});

it('the CLI loads pg only through a dynamic import, when the PostgreSQL store opens', () => {
  const imports = [...moduleGraph('dist/cli.js').values()].flatMap((code) => code.match(new RegExp(PG, 'g')) ?? []);
  expect(imports).toEqual(['import("pg"']);
});
