// How the collector opens a store an embedder gives it: it waits for one whose database is not up
// yet (a StoreConnectError), and gives up at once on any other failure.
import { describe, expect, it } from 'vitest';
import { AnalyticsError } from 'batched-analytics/internal';
import { DataDirLockedError, StoreConnectError } from '../../src/delivery/errors.js';
import { openStore } from '../../src/delivery/open-store.js';
import type { Store, StoreSnapshot } from '../../src/delivery/store.js';
import { Reporter } from '../../src/config/report.js';
import { recordingLogger } from '../observe/recording-logger.js';

/** A store whose `open` fails with each of `failures` in turn, then opens. */
function storeFailing(failures: Error[]): { store: Store; tries: () => number } {
  let tries = 0;
  const open = async (): Promise<StoreSnapshot> => {
    const failure = failures[tries++];
    if (failure !== undefined) throw failure;
    return { pending: 3 };
  };
  return { store: { open } as unknown as Store, tries: () => tries };
}

describe('openStore', () => {
  it('tries again while the store says its database cannot be reached, each try reported, and opens once it can', async () => {
    const { store, tries } = storeFailing([new StoreConnectError('not up yet'), new StoreConnectError('still not up')]);
    const waits: string[] = [];
    const logger = recordingLogger();
    expect(await openStore(store, { startTimeout: 10_000, report: new Reporter(logger), onWait: (reason) => waits.push(reason) })).toEqual({ pending: 3 });
    expect(tries()).toBe(3);
    expect(waits).toEqual(['not up yet', 'still not up']);
    // Each try, not rate-limited like other reports: the backoff paces them.
    expect(logger.lines).toEqual([
      { level: 'warn', fields: {}, msg: 'collector: the store is not available yet (try 1): not up yet; trying again in 250 ms (postgres.startTimeout)' },
      { level: 'warn', fields: {}, msg: 'collector: the store is not available yet (try 2): still not up; trying again in 500 ms (postgres.startTimeout)' },
    ]);
  });

  it('gives up at once on another failure, even one with the same code', async () => {
    const locked = storeFailing([new DataDirLockedError('in use')]);
    await expect(openStore(locked.store, { startTimeout: 10_000, report: new Reporter(recordingLogger()) })).rejects.toBeInstanceOf(DataDirLockedError);
    expect(locked.tries()).toBe(1);
    const lookalike = storeFailing([new AnalyticsError('not a connect failure', { code: 'ERR_STORE_CONNECT' })]);
    await expect(openStore(lookalike.store, { startTimeout: 10_000, report: new Reporter(recordingLogger()) })).rejects.toThrow('not a connect failure');
    expect(lookalike.tries()).toBe(1);
  });
});
