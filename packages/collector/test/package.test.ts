import { readFileSync } from 'node:fs';
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

it('its executable starts with a shebang', () => {
  expect(readFileSync(new URL('dist/main.js', root), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
});
