import { setTimeout as sleep } from 'node:timers/promises';
import type { Reporter } from '../config/report.js';
import { StoreConnectError } from './errors.js';
import type { Store, StoreSnapshot } from './store.js';

/** Waits between tries to open the store, in ms: doubled after each failure up to the most. */
export const OPEN_RETRY = { first: 250, most: 5_000 } as const;

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** How long to keep trying, in ms; 0: the first failure is final. */
  startTimeout: number;
  /** Stops the waiting (the process is asked to stop): the last failure is thrown. */
  signal?: AbortSignal;
  /** Where each failed try is reported. */
  report: Reporter;
  /** Told why each failed try failed, before the wait. */
  onWait?: (reason: string) => void;
}

/**
 * Opens the store, trying again while its database is not reachable yet (containers started in
 * any order), each try logged, until `startTimeout` has passed. Other failures (a data dir another
 * process holds, a schema a newer collector migrated) are final at once: waiting would not help.
 * @throws the last failure.
 */
export async function openStore(store: Store, options: OpenStoreOptions): Promise<StoreSnapshot> {
  const deadline = Date.now() + options.startTimeout;
  for (let attempt = 1, wait: number = OPEN_RETRY.first; ; attempt += 1, wait = Math.min(wait * 2, OPEN_RETRY.most)) {
    try {
      return await store.open();
    } catch (error) {
      const left = deadline - Date.now();
      if (!(error instanceof StoreConnectError) || left <= 0 || options.signal?.aborted) throw error;
      const pause = Math.min(wait, left);
      options.onWait?.(error.message);
      // Every try shows: the backoff already paces them.
      options.report.each('warn', 'collector: the store is not available yet (try %d): %s; trying again in %d ms (postgres.startTimeout)', attempt, error.message, pause);
      await sleep(pause, undefined, { signal: options.signal, ref: false }).catch(() => undefined);
      if (options.signal?.aborted) throw error;
    }
  }
}
