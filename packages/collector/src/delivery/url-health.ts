import { displayUrl, HttpError, log, messageOf } from 'batched-analytics/internal';
import { ALERTS_SOURCE, FAILING_DEFAULTS, type FailingOptions } from '../config/config.js';
import type { Reporter } from '../config/report.js';
import type { DeliveryEmitter } from './events.js';
import { type UrlState, type UrlStateChange, type UrlStates } from './url-states.js';
import { sourceKey } from './source-key.js';

/** `endpoint.failing` is sent at most this often per URL, in ms: an hour. */
export const FAILING_ALERT_EVERY = 60 * 60 * 1000;

/** One attempt at a URL, as the destination told it (its `attempt` event, taken as it is). */
export interface UrlAttempt {
  ok: boolean;
  messageId: string;
  status?: number;
  error?: Error;
}

/**
 * Keeps track of each webhook URL's failures and disables the one whose attempts have all failed
 * for `disableAfter`: the deliverer asks `isDisabled` before each attempt, from memory. The store
 * holds what must survive a restart and be shared (since when a URL fails, whether it is disabled,
 * when it alerted); it is written only when that changes, never per attempt, and read again on
 * every `refresh()` (the deliverer's poll), which is how one process learns what another did.
 * The count of failed attempts in a row (for `endpoint.failing`) is each process's own.
 */
export class UrlHealth {
  readonly #store: UrlStates;
  readonly #events: DeliveryEmitter;
  readonly #report: Reporter;
  #options: FailingOptions;
  /** The states as last read or written, by `sourceKey`. */
  #states = new Map<string, UrlState>();
  /** Sources with a URL disabled or enabled again: the fast path skips all others with one lookup. */
  #affected = new Set<string>();
  /** The URLs failing now (their state has `failingSince`), by source: a success at any other costs two lookups. */
  #failing = new Map<string, Set<string>>();
  /**
   * Failed attempts in a row in this process, by source, then URL: kept by name rather than by
   * `sourceKey` so that a success while another URL fails makes no key.
   */
  readonly #failures = new Map<string, Map<string, number>>();
  /** URLs whose state is being changed: their next attempts do not pile up writes. */
  readonly #changing = new Set<string>();

  constructor(options: { store: UrlStates; events: DeliveryEmitter; report: Reporter; failing?: Partial<FailingOptions> }) {
    this.#store = options.store;
    this.#events = options.events;
    this.#report = options.report;
    this.#options = { ...FAILING_DEFAULTS, ...options.failing };
  }

  /** Takes new options (a config reload). */
  reconfigure(failing: Partial<FailingOptions>): void {
    this.#options = { ...FAILING_DEFAULTS, ...failing };
  }

  /**
   * Reads every URL's state from the store again.
   * @returns the URLs that were disabled here and are not any more (another process enabled them).
   */
  async refresh(): Promise<UrlState[]> {
    const states = await this.#store.urlStates();
    const enabled = states.filter((state) => state.disabledAt === undefined && this.#states.get(sourceKey(state.source, state.url))?.disabledAt !== undefined);
    this.#states = new Map(states.map((state) => [sourceKey(state.source, state.url), state]));
    this.#index();
    return enabled;
  }

  /** Whether any URL of `source` is disabled or was enabled again: when not, nothing else need be asked. */
  affects(source: string): boolean {
    return this.#affected.has(source);
  }

  isDisabled(source: string, url: string): boolean {
    return this.#states.get(sourceKey(source, url))?.disabledAt !== undefined;
  }

  /** When `url` was last enabled again, if ever. */
  enabledAt(source: string, url: string): number | undefined {
    return this.#states.get(sourceKey(source, url))?.enabledAt;
  }

  /** The URLs that fail or are disabled now, as last read. */
  states(): UrlState[] {
    return [...this.#states.values()];
  }

  /** An attempt at `url` ended: a success clears its failures, a failure may make it failing or disabled. */
  attempted(source: string, url: string, attempt: UrlAttempt): void {
    // An alert URL that fails never alerts about itself, nor is disabled: alerts are given up by their retry window.
    if (source === ALERTS_SOURCE) return;
    // The common case costs two lookups: a success at a URL that is not failing.
    if (attempt.ok) {
      this.#clearFailures(source, url);
      if (this.#failing.get(source)?.has(url) === true) {
        this.#change(sourceKey(source, url), source, url, (current) => (current?.failingSince === undefined ? undefined : { ...current, failingSince: undefined }));
      }
      return;
    }
    const key = sourceKey(source, url);
    const state = this.#states.get(key);
    let counts = this.#failures.get(source);
    if (counts === undefined) this.#failures.set(source, (counts = new Map()));
    const failures = (counts.get(url) ?? 0) + 1;
    counts.set(url, failures);
    const now = Date.now();
    const last = lastOf(attempt);
    const { disableAfter, failingAfter } = this.#options;
    const disabling = (current: UrlState | undefined) => current?.failingSince !== undefined && current.disabledAt === undefined && now - current.failingSince >= disableAfter;
    const alertDue = (current: UrlState | undefined) => current?.failingAlertAt === undefined || now - current.failingAlertAt >= FAILING_ALERT_EVERY;
    if (disabling(state)) {
      this.#change(key, source, url, (current) => (disabling(current) ? { ...current!, disabledAt: now, ...last } : undefined), ({ before, after }) => {
        if (before?.disabledAt !== undefined || after?.disabledAt === undefined) return;
        const shown = displayUrl(url);
        this.#report.warn({ source, url: shown }, 'collector: %s: webhook URL %s is disabled: every attempt at it failed since %s; POST /v1/webhooks/enable enables it', source, shown, new Date(after.failingSince!).toISOString());
        this.#events.emit('urlDisabled', { state: after, messageId: attempt.messageId });
      });
    } else if (failures >= failingAfter && alertDue(state)) {
      // Its first failure too, when failingAfter is 1.
      const change = (current: UrlState | undefined) => (alertDue(current) ? { ...current!, failingSince: current?.failingSince ?? now, failingAlertAt: now, ...last } : undefined);
      this.#change(key, source, url, change, ({ before, after }) => {
        if (after?.failingAlertAt === before?.failingAlertAt) return;
        this.#events.emit('urlFailing', { state: after!, failures, messageId: attempt.messageId });
      });
    } else if (state?.failingSince === undefined) {
      this.#change(key, source, url, (current) => (current?.failingSince === undefined ? { ...current!, failingSince: now, ...last } : undefined));
    }
  }

  /**
   * Enables a disabled URL again: requests go to it from now on.
   * @returns its state then, or undefined when it was not disabled.
   */
  async enable(source: string, url: string): Promise<UrlState | undefined> {
    const now = Date.now();
    const { before, after } = await this.#store.changeUrlState(source, url, (current) =>
      current?.disabledAt === undefined ? undefined : { ...current, disabledAt: undefined, failingSince: undefined, enabledAt: now },
    );
    const key = sourceKey(source, url);
    this.#clearFailures(source, url);
    if (after !== undefined) this.#states.set(key, after);
    this.#index();
    if (before?.disabledAt === undefined) return undefined;
    log('collector: %s: a webhook URL was enabled again', source);
    this.#events.emit('urlEnabled', { state: after!, disabledAt: before.disabledAt });
    return after;
  }

  /** Forgets the failures in a row of `url`. */
  #clearFailures(source: string, url: string): void {
    const counts = this.#failures.get(source);
    if (counts?.delete(url) === true && counts.size === 0) this.#failures.delete(source);
  }

  /** Which sources have URLs disabled, enabled again, or failing: the fast paths' sets. */
  #index(): void {
    const states = [...this.#states.values()];
    this.#affected = new Set(states.filter((state) => state.disabledAt !== undefined || state.enabledAt !== undefined).map((state) => state.source));
    this.#failing = new Map();
    for (const { source, url, failingSince } of states) {
      if (failingSince === undefined) continue;
      let urls = this.#failing.get(source);
      if (urls === undefined) this.#failing.set(source, (urls = new Set()));
      urls.add(url);
    }
  }

  /** Changes a URL's state in the store, one change per URL at a time; then keeps what the store has. */
  #change(key: string, source: string, url: string, change: UrlStateChange, then?: (result: { before?: UrlState; after?: UrlState }) => void): void {
    if (this.#changing.has(key)) return;
    this.#changing.add(key);
    this.#store
      .changeUrlState(source, url, change)
      .then((result) => {
        if (result.after !== undefined) this.#states.set(key, result.after);
        this.#index();
        then?.(result);
      })
      .catch((error: unknown) => this.#report.warn('collector: could not record the state of a webhook URL of %s (tried again on its next attempt): %s', source, messageOf(error)))
      .finally(() => this.#changing.delete(key));
  }
}


/** A failure as alerts and the page show it: the status when the URL answered, else the error's words. */
function lastOf({ status, error }: UrlAttempt): Pick<UrlState, 'lastStatus' | 'lastError'> {
  if (status !== undefined) return { lastStatus: status, lastError: undefined };
  return { lastStatus: error instanceof HttpError ? error.status : undefined, lastError: error?.message };
}
