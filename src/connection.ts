import type { Dispatcher } from 'undici';
import { FetchConnection } from './connection-fetch.js';
import type { FetchLike } from './options.js';
import type { RequestAbort } from './request-abort.js';
import { IS_NODE } from './runtime.js';

/** One POST, as a {@link Connection} sends it. */
export interface Outgoing {
  url: string;
  body: string | Uint8Array;
  headers: Record<string, string>;
  /** Ends the request, and the reading of its response, when thrown. */
  abort: RequestAbort;
}

/** A response that arrived, before it is judged. */
export interface RawResponse {
  status: number;
  retryAfter: string | null | undefined;
  /** Reads the body for an error report. */
  text(): Promise<string>;
  /** Reads and drops the body, so the socket can carry the next request. */
  discard(): Promise<void>;
}

/** How requests leave the process: undici over an agent on Node, the runtime's `fetch` elsewhere. */
export interface Connection {
  send(request: Outgoing): Promise<RawResponse>;
  /** Releases its own sockets: gracefully, or at once with `force`. A user's dispatcher stays open. */
  close(force?: boolean): Promise<void>;
}

/** What a {@link Connection} is opened with. */
export interface ConnectionOptions {
  /** Sockets of the connection's own undici agent. */
  connections: number;
  /** A user's undici dispatcher: used, never closed. */
  dispatcher?: Dispatcher | undefined;
  /** A user's fetch-compatible function: used instead of undici or the runtime's fetch. */
  fetch?: FetchLike | undefined;
  /** Verify certificates even when `NODE_TLS_REJECT_UNAUTHORIZED=0` says otherwise. */
  strictTls?: boolean;
}

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
