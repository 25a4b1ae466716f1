import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { withoutUndefined, type UrlState, type UrlStateChange, type UrlStates } from '../url-states.js';
import { sourceKey } from '../source-key.js';

/** The file in the data dir that holds the URLs' states. */
export const URL_STATES_FILE = 'urls.json';

/**
 * The journal's URL states: a small JSON file in the data dir (one entry per URL that failed),
 * read on first use and rewritten whole on each change, written aside and renamed over so a crash
 * leaves the old file or the new one. Changes are rare (a URL starts or stops failing, is disabled
 * or enabled) and serialised here: one process owns the data dir.
 */
export class UrlStateFile implements UrlStates {
  readonly #file: string;
  #states: Promise<Map<string, UrlState>> | undefined;
  /** The change being written: the next waits for it. */
  #writing: Promise<unknown> = Promise.resolve();

  constructor(dir: string) {
    this.#file = path.join(dir, URL_STATES_FILE);
  }

  async urlStates(): Promise<UrlState[]> {
    // What was changed before is read back.
    await this.#writing;
    return [...(await this.#loaded()).values()].map((state) => ({ ...state }));
  }

  changeUrlState(source: string, url: string, change: UrlStateChange): Promise<{ before: UrlState | undefined; after: UrlState | undefined }> {
    const changing = this.#writing.then(async () => {
      const states = await this.#loaded();
      const key = sourceKey(source, url);
      const before = states.get(key);
      const next = change(before === undefined ? undefined : { ...before });
      if (next === undefined || isDeepStrictEqual(next, before)) return { before, after: before };
      const after = withoutUndefined({ ...next, source, url });
      const written = new Map(states).set(key, after);
      await this.#write([...written.values()]);
      states.set(key, after);
      return { before, after };
    });
    this.#writing = changing.catch(() => undefined);
    return changing;
  }

  #loaded(): Promise<Map<string, UrlState>> {
    this.#states ??= readFile(this.#file, 'utf8').then(
      (text) => new Map((JSON.parse(text) as UrlState[]).map((state) => [sourceKey(state.source, state.url), state])),
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return new Map<string, UrlState>();
        this.#states = undefined;
        throw error;
      },
    );
    return this.#states;
  }

  async #write(states: UrlState[]): Promise<void> {
    const aside = `${this.#file}.tmp`;
    try {
      await writeFile(aside, `${JSON.stringify(states)}\n`, { flush: true });
    } catch (error) {
      await rm(aside, { force: true });
      throw error;
    }
    await rename(aside, this.#file);
  }
}
