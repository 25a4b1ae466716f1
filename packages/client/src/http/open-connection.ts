import { FetchConnection } from './connection-fetch.js';
import type { Connection, ConnectionOptions, Outgoing, RawResponse } from './connection.js';
import { IS_NODE } from '../platform/runtime.js';

/**
 * Picks how to send, without asking the user: their `fetch` if given; undici on Node (or when they
 * gave a dispatcher); otherwise the runtime's `fetch`, looked up at each call so that wrappers
 * installed later (instrumentation, msw) see the requests.
 */
export function openConnection(options: ConnectionOptions): Connection {
  if (options.fetch) return new FetchConnection(options.fetch, options.dispatcher);
  if (IS_NODE || options.dispatcher) return new DeferredConnection(options);
  return new FetchConnection((url, init) => globalThis.fetch(url, init));
}

/**
 * undici, loaded on the first request: importing it at the top would make the package fail to
 * load where Node's built-ins are missing (the Edge Runtime) or fetch is the only way out (Workers).
 */
class DeferredConnection implements Connection {
  readonly #options: ConnectionOptions;
  #loading: Promise<Connection> | undefined;
  /** Set once undici is loaded: later requests call it directly, with no promise in between. */
  #loaded: Connection | undefined;

  constructor(options: ConnectionOptions) {
    this.#options = options;
  }

  send(request: Outgoing): Promise<RawResponse> {
    if (this.#loaded) return this.#loaded.send(request);
    this.#loading ??= import('./connection-undici.js').then(({ UndiciConnection }) => {
      this.#loaded = new UndiciConnection(this.#options);
      return this.#loaded;
    });
    return this.#loading.then((connection) => connection.send(request));
  }

  async close(force?: boolean): Promise<void> {
    // If undici failed to load, every send already reported it; there is nothing to release.
    const connection = await this.#loading?.catch(() => undefined);
    await connection?.close(force);
  }
}
