// The `UrlStates` contract, part of the Store contract (store-contract.ts runs it for every store).
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/delivery/store.js';
import type { UrlState } from '../../src/delivery/url-states.js';

/**
 * Registers the URL states' tests inside a store's contract suite.
 * @param store makes a new store on the test's data, not yet opened.
 */
export function urlStatesContract(store: () => Store): void {
  describe('webhook URL states', () => {
    const disable = (at: number) => (current: UrlState | undefined): UrlState | undefined =>
      current?.disabledAt === undefined ? { ...current!, disabledAt: at } : undefined;

    it('has none at first; keeps each change per source and URL, whole, across a reopen', async () => {
      const first = store();
      await first.open();
      expect(await first.urlStates()).toEqual([]);
      const failing = await first.changeUrlState('web', 'https://a.example/hook?k=1', () => ({ source: 'ignored', url: 'ignored', failingSince: 10, lastStatus: 500 }));
      expect(failing).toEqual({ before: undefined, after: { source: 'web', url: 'https://a.example/hook?k=1', failingSince: 10, lastStatus: 500 } });
      await first.changeUrlState('app', 'https://a.example/hook?k=1', (current) => ({ ...current!, failingSince: 20, lastError: 'ECONNREFUSED' }));
      const disabled = await first.changeUrlState('web', 'https://a.example/hook?k=1', disable(30));
      expect(disabled.after).toEqual({ source: 'web', url: 'https://a.example/hook?k=1', failingSince: 10, lastStatus: 500, disabledAt: 30 });
      await first.close();

      const second = store();
      await second.open();
      const states = await second.urlStates();
      expect(states.sort((a, b) => a.source.localeCompare(b.source))).toEqual([
        { source: 'app', url: 'https://a.example/hook?k=1', failingSince: 20, lastError: 'ECONNREFUSED' },
        { source: 'web', url: 'https://a.example/hook?k=1', failingSince: 10, lastStatus: 500, disabledAt: 30 },
      ]);
    });

    it('leaves the state alone when the change returns nothing, and says what it is', async () => {
      const opened = store();
      await opened.open();
      await opened.changeUrlState('web', 'https://a.example/', disable(1));
      expect(await opened.changeUrlState('web', 'https://a.example/', disable(2))).toEqual({
        before: { source: 'web', url: 'https://a.example/', disabledAt: 1 },
        after: { source: 'web', url: 'https://a.example/', disabledAt: 1 },
      });
      expect(await opened.changeUrlState('web', 'https://b.example/', () => undefined)).toEqual({ before: undefined, after: undefined });
      expect(await opened.urlStates()).toEqual([{ source: 'web', url: 'https://a.example/', disabledAt: 1 }]);
    });

    it('rejects after close with ERR_STORE_CLOSED', async () => {
      const closed = store();
      await closed.open();
      await closed.close();
      await expect(closed.urlStates()).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
      await expect(closed.changeUrlState('web', 'https://a.example/', disable(1))).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
    });

    it('serialises changes of one URL, also between two stores on the same data: only one of two disables finds it enabled', async () => {
      const first = store();
      await first.open();
      // The journal is one process's: its second "process" is the same store, called twice at once.
      const second = first.database ? store() : first;
      if (second !== first) await second.open();
      const results = await Promise.all([
        first.changeUrlState('web', 'https://a.example/', disable(1)),
        second.changeUrlState('web', 'https://a.example/', disable(2)),
        ...Array.from({ length: 8 }, (_, n) => first.changeUrlState('web', 'https://a.example/', (current) => ({ ...current!, failingSince: (current?.failingSince ?? 0) + n + 1 }))),
      ]);
      const disabledHere = results.slice(0, 2).filter(({ before, after }) => before?.disabledAt === undefined && after?.disabledAt !== undefined);
      expect(disabledHere).toHaveLength(1);
      const [state] = await second.urlStates();
      // No change was lost: every increment counted (1 + 2 + ... + 8).
      expect(state!.failingSince).toBe(36);
      expect([1, 2]).toContain(state!.disabledAt);
    });
  });
}
