import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
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

// What the package exports is documented: docs/collector.md's "From code" section names each export
// and its example runs as written.
describe('the programmatic API', () => {
  const doc = readFileSync(new URL('../../docs/collector.md', root), 'utf8');
  const section = doc.slice(doc.indexOf('## From code'), doc.indexOf('\n## ', doc.indexOf('## From code') + 1));

  it.each([['index', '.'], ['cli', './cli']])('names every export of %s', async (entry) => {
    const exported = Object.keys(await import(fileURLToPath(new URL(`dist/${entry}.js`, root))));
    expect(exported.length).toBeGreaterThan(0);
    expect(exported.filter((name) => !section.includes(`\`${name}`))).toEqual([]);
  });

  it('its example runs as written', async () => {
    const example = section.match(/```js\n([\s\S]*?)```/)![1]!;
    const cwd = mkdtempSync(path.join(tmpdir(), 'from-code-'));
    // The script sits in the repository so that it finds the package as an app would; it runs in a
    // scratch directory holding the config it names.
    const script = fileURLToPath(new URL(`../../.tmp/from-code-${path.basename(cwd)}.mjs`, root));
    try {
      mkdirSync(path.dirname(script), { recursive: true });
      writeFileSync(script, example);
      cpSync(fileURLToPath(new URL('../../examples', root)), path.join(cwd, 'examples'), { recursive: true });
      const { stdout } = await promisify(execFile)(process.execPath, [script], { cwd });
      expect(stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\n$/);
    } finally {
      rmSync(script, { force: true });
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
