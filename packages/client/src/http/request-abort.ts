/**
 * One request's abort switch: the timeout and the caller's signal throw it, and the connection
 * ends the request when it is thrown. It has the shape of an event emitter of `abort` (`on`,
 * `once`, `removeListener`, `aborted`, `reason`), which undici takes as a request's `signal` as
 * well as an `AbortSignal`: on Node 20 creating an `AbortController` for every request cost a
 * Webhooks delivery about a fifth of its CPU (`npm run bench:destination`). A fetch connection
 * links it to an `AbortController` of its own.
 */
export class RequestAbort {
  aborted = false;
  reason: unknown = undefined;
  #listeners: (() => void)[] = [];

  /** Ends the request with `reason`; later calls do nothing. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    for (const listener of this.#listeners.splice(0)) listener();
  }

  on(event: 'abort', listener: () => void): this {
    if (event === 'abort' && !this.aborted) this.#listeners.push(listener);
    return this;
  }

  /** The same as `on`: `abort` is emitted at most once. */
  once(event: 'abort', listener: () => void): this {
    return this.on(event, listener);
  }

  removeListener(event: 'abort', listener: () => void): this {
    const at = this.#listeners.indexOf(listener);
    if (event === 'abort' && at !== -1) this.#listeners.splice(at, 1);
    return this;
  }
}
