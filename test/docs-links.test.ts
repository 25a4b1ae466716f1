import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Every relative link in the documentation must resolve: the file exists and, when the link has an
// anchor, a heading of the target produces it the way GitHub makes heading anchors.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The repository (package.json's `repository`): the packed READMEs link to its files by URL. */
const REPOSITORY = 'https://github.com/batched-analytics/batched-analytics';
const REPOSITORY_FILES = `${REPOSITORY}/blob/main/`;

/** The markdown files of the repo root, docs/ and packages/<name>/ (not their node_modules). */
function markdownFiles(): string[] {
  const inDir = (dir: string) =>
    existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.md')).map((name) => join(dir, name)) : [];
  const packages = join(root, 'packages');
  const packageDirs = existsSync(packages)
    ? readdirSync(packages)
        .map((name) => join(packages, name))
        .filter((dir) => statSync(dir).isDirectory())
    : [];
  return [root, join(root, 'docs'), ...packageDirs].flatMap(inDir);
}

/**
 * The text outside fenced code blocks, one entry per line (fenced lines become empty). As in
 * CommonMark, a closing fence has nothing after it but spaces: "``` more text" does not close the
 * block, and everything after it renders as code (headings included).
 */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split(/\r?\n/).map((line) => {
    if (fence === undefined) {
      const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (opening === undefined) return line;
      fence = opening;
      return '';
    }
    const closing = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line)?.[1];
    if (closing !== undefined && closing[0] === fence[0] && closing.length >= fence.length) fence = undefined;
    return '';
  });
}

/** GitHub's anchor for a heading: lowercase, punctuation but `-` and `_` removed, spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the headings of a file produce, with GitHub's `-1`, `-2` suffixes for repeats. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** The relative links and images of a file: `[text](path#anchor)`, outside code. */
function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  proseLines(readFileSync(file, 'utf8')).forEach((text, index) => {
    const prose = text.replace(/`[^`]*`/g, '``');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // https:, mailto:
      links.push({ file, line: index + 1, target });
    }
  });
  return links;
}

/** The links to a file of the repository by its URL, as relative links from `file` to check alike. */
function repositoryLinks(file: string): Link[] {
  const links: Link[] = [];
  proseLines(readFileSync(file, 'utf8')).forEach((text, index) => {
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      if (!match[1]!.startsWith(REPOSITORY_FILES)) continue;
      const [path = '', anchor] = match[1]!.slice(REPOSITORY_FILES.length).split('#');
      const target = relative(dirname(file), join(root, path)) + (anchor === undefined ? '' : `#${anchor}`);
      links.push({ file, line: index + 1, target });
    }
  });
  return links;
}

/** Why a link does not resolve, or undefined when it does. */
function problem({ file, target }: Link): string | undefined {
  const hash = target.indexOf('#');
  const path = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
  if (!existsSync(resolved)) return `no file ${relative(root, resolved)}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!resolved.endsWith('.md')) return `an anchor into ${relative(root, resolved)}, which is not markdown`;
  if (!anchorsOf(resolved).has(anchor)) return `no heading in ${relative(root, resolved)} makes #${anchor}`;
  return undefined;
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the READMEs and the docs pages', () => {
    const names = files.map((file) => relative(root, file));
    expect(names).toContain('README.md');
    expect(names.filter((name) => name.startsWith('docs/')).length).toBeGreaterThan(0);
  });

  it('makes anchors as GitHub does', () => {
    expect(slug('Delivery, retries and failures')).toBe('delivery-retries-and-failures');
    expect(slug('`flush(): Promise<Summary>`')).toBe('flush-promisesummary');
    expect(slug('From a file: `batched-analytics import`')).toBe('from-a-file-batched-analytics-import');
    expect(slug('deadLetter: keep what was not delivered')).toBe('deadletter-keep-what-was-not-delivered');
    expect(slug('snake_case and -hyphens-')).toBe('snake_case-and--hyphens-');
  });

  it.each(files.map((file) => [relative(root, file), file]))('every relative link in %s resolves', (_name, file) => {
    const dead = [...relativeLinks(file), ...repositoryLinks(file)]
      .map((link) => ({ link, why: problem(link) }))
      .filter(({ why }) => why !== undefined)
      .map(({ link, why }) => `${relative(root, link.file)}:${link.line}: (${link.target}) ${why}`);
    expect(dead).toEqual([]);
  });
});

// A package's README is its page on the registry, without the repository around it: a relative link
// there resolves only to a file of the package; the others link to the repository by URL.
describe('the packed READMEs', () => {
  it.each(['client', 'collector'])('packages/%s: relative links point only to files the package ships, and package.json names the repository', (name) => {
    const dir = join(root, 'packages', name);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { files: string[]; repository: unknown };
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${REPOSITORY}.git`, directory: `packages/${name}` });
    const shipped = (path: string) =>
      ['README.md', 'LICENSE', 'package.json'].includes(path) || pkg.files.some((entry) => !entry.startsWith('!') && (path === entry || path.startsWith(`${entry}/`)));
    const readme = join(dir, 'README.md');
    const outside = relativeLinks(readme)
      .map(({ line, target }) => ({ line, target, path: relative(dir, resolve(dir, decodeURIComponent(target.split('#')[0]!))) }))
      .filter(({ target, path }) => !target.startsWith('#') && !shipped(path))
      .map(({ line, target }) => `README.md:${line}: (${target}) is not in the package`);
    expect(outside).toEqual([]);
    expect(repositoryLinks(readme).length).toBeGreaterThan(0);
  });
});
