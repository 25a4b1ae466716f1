import { readFileSync } from 'node:fs';

/** An import of pg (or a path of it) in built code: static, dynamic or required. */
export const PG_IMPORT = /(?:from|import\(|require\()\s*["']pg(?:\/[^"']*)?["']/;

/** Every built module `entry` (under `root`) can load through relative imports, dynamic ones included. */
export function moduleGraph(root: URL, entry: string): Map<string, string> {
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
