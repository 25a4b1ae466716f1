// The source's layers: each package's folders form a stack, and a module imports only from its own
// folder's layer or those below it, never upwards, never sideways into a sibling of the same
// height, and never round in a cycle. This reads the import lines themselves; no dependency.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Each package's layers, lowest first; folders on one line share a height and may not import each other. */
const LAYERS: Record<string, string[][]> = {
  client: [['platform'], ['core'], ['http'], ['client'], ['webhooks', 'import'], ['cli']],
  // A message flows up: ingress hands it to delivery, whose events the page (debugger) and the
  // metrics and logs (observe) follow; app/ wires them. Nothing below calls back up.
  collector: [['config'], ['delivery'], ['debugger', 'observe'], ['ingress'], ['app'], ['cli']],
};

/** Relative imports and re-exports of a module (type-only ones too: they couple the code as much). */
export function importsOf(code: string): string[] {
  return [...code.matchAll(/^(?:import|export)\b[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/gm)].map((match) => match[1]!);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** The layer of a file: its first folder under src/; undefined for the entry points at src/'s root. */
function folderOf(src: string, file: string): string | undefined {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** The module a relative specifier names: `./x.js` is `x.ts` (or its web twin's original). */
function resolve(from: string, specifier: string): string {
  return path.resolve(path.dirname(from), specifier).replace(/\.js$/, '.ts');
}

/** Where the import of `to` by `from` breaks the stack, or undefined when it does not. */
export function violation(layers: string[][], src: string, from: string, to: string): string | undefined {
  const height = (folder: string | undefined) => (folder === undefined ? Infinity : layers.findIndex((line) => line.includes(folder)));
  const [a, b] = [folderOf(src, from), folderOf(src, to)];
  if (!to.startsWith(src + path.sep)) return 'it reaches outside the package\'s src/';
  if (a === undefined || a === b) return undefined;
  if (b === undefined) return 'it imports an entry point';
  if (height(a) === -1 || height(b) === -1) return `${height(a) === -1 ? a : b}/ is in no layer`;
  if (a === 'platform') return 'platform/ imports nothing of ours';
  if (height(b) > height(a)) return `${b}/ is above ${a}/`;
  if (height(b) === height(a)) return `${a}/ and ${b}/ are siblings`;
  return undefined;
}

/** The import cycles among `graph`'s modules, each as its path. */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe.each(Object.entries(LAYERS))('packages/%s/src', (name, layers) => {
  const src = path.join(ROOT, 'packages', name, 'src');
  const graph = new Map(sourceFiles(src).map((file) => [file, importsOf(readFileSync(file, 'utf8')).map((specifier) => resolve(file, specifier))]));

  it('imports point down the layers only', () => {
    const wrong = [...graph].flatMap(([from, targets]) =>
      targets.flatMap((to) => {
        const why = violation(layers, src, from, to);
        return why === undefined ? [] : [`${path.relative(src, from)} -> ${path.relative(src, to)}: ${why}`];
      }),
    );
    expect(wrong).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph).map((cycle) => cycle.map((file) => path.relative(src, file)).join(' -> '))).toEqual([]);
  });
});

describe('the layering check itself', () => {
  const src = '/p/src';
  const layers = LAYERS.client!;
  it.each([
    ['/p/src/core/message.ts', '/p/src/client/options.ts', 'client/ is above core/'],
    ['/p/src/webhooks/body.ts', '/p/src/import/call.ts', 'webhooks/ and import/ are siblings'],
    ['/p/src/platform/bytes.ts', '/p/src/core/errors.ts', 'platform/ imports nothing of ours'],
    ['/p/src/core/errors.ts', '/p/src/index.ts', 'it imports an entry point'],
    ['/p/src/core/errors.ts', '/q/src/core/errors.ts', "it reaches outside the package's src/"],
  ])('refuses %s importing %s', (from, to, why) => {
    expect(violation(layers, src, from, to)).toBe(why);
  });
  it.each([
    ['/p/src/delivery/deliverer.ts', '/p/src/debugger/events.ts', 'debugger/ is above delivery/'],
    ['/p/src/delivery/intake.ts', '/p/src/ingress/router.ts', 'ingress/ is above delivery/'],
    ['/p/src/delivery/deliverer.ts', '/p/src/observe/metrics.ts', 'observe/ is above delivery/'],
    ['/p/src/debugger/feed.ts', '/p/src/observe/metrics.ts', 'debugger/ and observe/ are siblings'],
    ['/p/src/ingress/server.ts', '/p/src/app/collector.ts', 'app/ is above ingress/'],
  ])('in the collector, refuses %s calling back up to %s', (from, to, why) => {
    expect(violation(LAYERS.collector!, src, from, to)).toBe(why);
  });
  it('in the collector, accepts the page following delivery and the root wiring ingress', () => {
    expect(violation(LAYERS.collector!, src, '/p/src/debugger/feed.ts', '/p/src/delivery/events.ts')).toBeUndefined();
    expect(violation(LAYERS.collector!, src, '/p/src/app/collector.ts', '/p/src/ingress/router.ts')).toBeUndefined();
  });
  it('accepts an import down the stack and one within a folder', () => {
    expect(violation(layers, src, '/p/src/client/analytics.ts', '/p/src/core/errors.ts')).toBeUndefined();
    expect(violation(layers, src, '/p/src/core/message.ts', '/p/src/core/errors.ts')).toBeUndefined();
  });
  it('finds a cycle, and reads type-only imports and re-exports', () => {
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]]))).toEqual([['a', 'b', 'c', 'a']]);
    expect(importsOf("import type { A } from './a.js';\nexport { B } from '../b.js';\n// from './c.js'")).toEqual(['./a.js', '../b.js']);
  });
});
