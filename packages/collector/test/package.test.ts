import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { moduleGraph, PG_IMPORT } from '../../../test/helpers/module-graph.js';

const root = new URL('..', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));

// pg is for the PostgreSQL store only: a collector on the journal never loads it.
it.each(['dist/main.js', 'dist/cli.js', 'dist/index.js'])('%s loads pg only through a dynamic import, when the PostgreSQL store opens', (entry) => {
  const imports = [...moduleGraph(root, entry).values()].flatMap((code) => code.match(new RegExp(PG_IMPORT, 'g')) ?? []);
  expect(imports).toEqual(['import("pg"']);
});

it('depends on the client of the same version', () => {
  const client = JSON.parse(readFileSync(new URL('../client/package.json', root), 'utf8'));
  expect(pkg.version).toBe(client.version);
  expect(pkg.dependencies['batched-analytics']).toBe(client.version);
});

// npm links a bin only if its file exists when `npm ci` runs, before a clone's first build: the
// bin is a committed launcher of the build (dist/main.js), not a file of dist/.
it('its executable is a committed launcher with a shebang, which runs the built command', async () => {
  const bin = fileURLToPath(new URL(pkg.bin['batched-analytics-collector'], root));
  expect(path.relative(fileURLToPath(root), bin)).not.toMatch(/^dist\//);
  expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  const { stdout } = await promisify(execFile)(process.execPath, [bin, '--help']);
  expect(stdout).toContain('or: batched-analytics-collector --config FILE');
});
