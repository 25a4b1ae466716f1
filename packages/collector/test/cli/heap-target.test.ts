// keepHeapNear in fresh processes (the test runner's own heap would hide what it does): a
// workload that keeps about 40 MB live while it allocates fast, as a collector taking messages
// does, peaks far lower with a target below what V8 alone lets the heap reach, and the same with
// a target far above it. The module is this source, compiled for the child as it is.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(path.join(tmpdir(), 'heap-target-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const source = readFileSync(new URL('../../src/cli/heap-target.ts', import.meta.url), 'utf8');
writeFileSync(
  path.join(dir, 'heap-target.mjs'),
  ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText,
);
writeFileSync(
  path.join(dir, 'churn.mjs'),
  `import { getHeapSpaceStatistics } from 'node:v8';
import { keepHeapNear } from './heap-target.mjs';
const target = Number(process.argv[2]);
// Where what survives lives, and what the target is about (the young generation is V8's own).
const oldGeneration = () =>
  getHeapSpaceStatistics()
    .filter(({ space_name }) => space_name === 'old_space' || space_name === 'large_object_space')
    .reduce((sum, { space_used_size }) => sum + space_used_size, 0);
const stop = target > 0 ? keepHeapNear(target) : () => undefined;
const window = [];
let largest = 0;
for (let n = 0; n < 6_000; n++) {
  window.push(Array.from({ length: 200 }, (_, i) => n + ':' + i + ':' + 'x'.repeat(40)));
  if (window.length > 1_000) window.shift();
  if (n % 50 === 0) {
    largest = Math.max(largest, oldGeneration());
    // Collections are reported between tasks, as in a server.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
stop();
console.log(largest);
`,
);

/** The largest old generation the workload reached, in MB, with a target of `targetMb` (0: none). */
const peakWith = (targetMb: number): number => Number(execFileSync(process.execPath, [path.join(dir, 'churn.mjs'), String(targetMb)], { encoding: 'utf8' })) / 2 ** 20;

/**
 * V8 11 (Node 20) lets this workload's old generation reach four times what is live; V8 13
 * (Node 24) grows it less on its own, and a target changes it less (measured: 96 MB against
 * 105 to 122 MB): there it must at least not grow more.
 */
const BELOW_V8 = Number(process.versions.v8.split('.')[0]) < 12 ? 0.6 : 1;

describe('keepHeapNear', () => {
  it('keeps the heap near a target below what V8 alone lets it reach, and leaves a heap far below the target to V8', () => {
    const own = peakWith(0);
    const kept = peakWith(20);
    const roomy = peakWith(4_096);
    // The premise: left alone, V8 lets the heap grow well past the ~40 MB kept live, so a 20 MB
    // target has something to cut. Node 20 reaches about 160 MB; Node 24 122 to 150 MB alone, but
    // 81 to 91 MB with other work on the cores (why it runs with the heavy tests, alone).
    expect(own).toBeGreaterThan(60);
    expect(kept).toBeLessThan(BELOW_V8 * own);
    expect(roomy).toBeGreaterThan(0.8 * own);
  }, 30_000);
});
