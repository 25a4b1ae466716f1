// keepHeapNear in fresh processes (the test runner's own heap would hide what it does): a
// workload that keeps about 40 MB live while it allocates fast, as a collector taking messages
// does, peaks far lower with a target below what V8 alone lets the heap reach, and the same with
// a target far above it; its young generation stops doubling at a sixth of the target. The
// module is this source, compiled for the child as it is.
//
// The children collect on their main thread (--single-threaded-gc): with V8's helper threads,
// how far the heap grows while a collection marks depends on the cores other processes leave
// free, and on a busy machine Node 24's heap alone peaked at 89 MB in one run and 150 MB in
// another. On one thread the same workload peaks at the same size, run after run, loaded or not.
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
// Where what survives lives: what the target is mostly about.
const oldGeneration = () =>
  getHeapSpaceStatistics()
    .filter(({ space_name }) => space_name === 'old_space' || space_name === 'large_object_space')
    .reduce((sum, { space_used_size }) => sum + space_used_size, 0);
// What the young generation holds, both its halves.
const youngGeneration = () => getHeapSpaceStatistics().find(({ space_name }) => space_name === 'new_space').space_size;
const stop = target > 0 ? keepHeapNear(target) : () => undefined;
const window = [];
let old = 0;
let young = 0;
for (let n = 0; n < 6_000; n++) {
  window.push(Array.from({ length: 200 }, (_, i) => n + ':' + i + ':' + 'x'.repeat(40)));
  if (window.length > 1_000) window.shift();
  if (n % 50 === 0) {
    old = Math.max(old, oldGeneration());
    young = Math.max(young, youngGeneration());
    // Collections are reported between tasks, as in a server.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
stop();
console.log(JSON.stringify({ old, young }));
`,
);

/** The largest old and young generations the workload reached, in MB, with a target of `targetMb` (0: none). */
const peaksWith = (targetMb: number): { old: number; young: number } => {
  const { old, young } = JSON.parse(execFileSync(process.execPath, ['--single-threaded-gc', path.join(dir, 'churn.mjs'), String(targetMb)], { encoding: 'utf8' })) as { old: number; young: number };
  return { old: old / 2 ** 20, young: young / 2 ** 20 };
};

describe('keepHeapNear', () => {
  it('keeps the heap near a target below what V8 alone lets it reach, and leaves a heap far below the target to V8', () => {
    const own = peaksWith(0).old;
    const kept = peaksWith(20).old;
    const roomy = peaksWith(4_096).old;
    // The premise: left alone, V8 lets the heap grow well past the ~40 MB kept live, so a 20 MB
    // target has something to cut. Measured: 128 MB alone and 60 with the target on Node 20;
    // 153 and 103 on Node 24 (V8 13 lets a target cut less).
    expect(own).toBeGreaterThan(100);
    expect(kept).toBeLessThan(0.75 * own);
    expect(roomy).toBeGreaterThan(0.8 * own);
  }, 30_000);

  it('stops doubling the young generation at a sixth of the target, where V8 alone doubles it further', () => {
    // The premise: the workload's survivors make V8 double the young generation past 16 MB. Measured:
    // 32 MB alone and 8 with a 48 MB target on Node 20; 128 and 48 on Node 24, whose V8 also grows
    // it in smaller steps between full collections, which the target leaves alone.
    const own = peaksWith(0).young;
    expect(own).toBeGreaterThan(16);
    expect(peaksWith(48).young).toBeLessThanOrEqual(own / 2);
  }, 30_000);
});
