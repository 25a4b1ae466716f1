/**
 * What the collector knows of one webhook URL of one source beyond a single delivery: since when
 * all its attempts have failed, whether it is disabled, and when it last alerted as failing. Times
 * in ms since the epoch. A URL that never failed has no state.
 */
export interface UrlState {
  source: string;
  /** The URL as the config has it. */
  url: string;
  /** The first failed attempt of the failures in a row now running; absent once a request succeeds. */
  failingSince?: number;
  /** When it was disabled: no request goes to it until it is enabled. */
  disabledAt?: number;
  /** When it was last enabled again: deliveries kept for it start a new retry window then. */
  enabledAt?: number;
  /** When it last sent the `endpoint.failing` alert. */
  failingAlertAt?: number;
  /** The last failure before it was disabled, for the page and alerts: an HTTP status or an error's words. */
  lastStatus?: number;
  lastError?: string;
}

/** A change to one URL's state: gets the state now (absent: none) and returns the next, or undefined to leave it. */
export type UrlStateChange = (current: UrlState | undefined) => UrlState | undefined;

/**
 * Where the URLs' states live: beside the deliveries, in the same store, so that they survive a
 * restart and are shared by the processes sharing it. Read whole (a handful of rows: one per URL
 * that failed), written only when a URL's state changes, never per delivery.
 */
export interface UrlStates {
  /** Every URL's state. */
  urlStates(): Promise<UrlState[]>;
  /**
   * Changes one URL's state atomically, serialised with every other change of it (in any process):
   * `change` may run again if another process changed it meanwhile.
   * @returns the state before and after (`after` equals `before` when `change` left it).
   */
  changeUrlState(source: string, url: string, change: UrlStateChange): Promise<{ before: UrlState | undefined; after: UrlState | undefined }>;
}

/** An object as JSON keeps it: entries cleared (undefined) left out. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}
