import type { Dispatcher } from 'undici';
import { optionalWithMethods } from '../core/validate.js';
import type { RequestAbort } from './request-abort.js';

/** A fetch-compatible function; see the client's `fetch` option. */
export type FetchLike = (input: string, init: RequestInit & { dispatcher?: Dispatcher }) => Promise<Response>;

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
  /**
   * The body's start (at most `RESPONSE_BODY_LIMIT` bytes) for an error report; past that, the
   * connection is closed unread. Never rejects: a body cut short gives what had arrived.
   */
  text(): Promise<string>;
  /**
   * Reads and drops the body, so the socket can carry the next request; one longer than
   * `RESPONSE_BODY_LIMIT` closes the connection instead. Never rejects.
   */
  discard(): Promise<void>;
}

/** How requests leave the process: undici over an agent on Node, the runtime's `fetch` elsewhere. */
export interface Connection {
  send(request: Outgoing): Promise<RawResponse>;
  /** Releases its own sockets: gracefully, or at once with `force`. A user's dispatcher stays open. */
  close(force?: boolean): Promise<void>;
}

/**
 * A user's `dispatcher` option, checked for what is called on it: `request` by the undici
 * connection, `dispatch` by undici's fetch, which a user's `fetch` is given it for. One without
 * them would fail every request, each retried, rather than the constructor.
 * @throws {ConfigError} naming option `name`.
 */
export function optionalDispatcher(name: string, value: Dispatcher | undefined): Dispatcher | undefined {
  return optionalWithMethods(name, value, ['request', 'dispatch'], 'an undici Dispatcher');
}

/** What a {@link Connection} is opened with. */
export interface ConnectionOptions {
  /** Sockets of the connection's own undici agent. */
  connections: number;
  /** A user's undici dispatcher: used, never closed. */
  dispatcher?: Dispatcher | undefined;
  /** A user's fetch-compatible function: used instead of undici or the runtime's fetch. */
  fetch?: FetchLike | undefined;
  /**
   * Send through the proxies `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` name (their lower-case forms
   * too) when no `dispatcher` is given; `false` ignores them.
   */
  proxy?: boolean | undefined;
  /** Verify certificates even when `NODE_TLS_REJECT_UNAUTHORIZED=0` says otherwise. */
  strictTls?: boolean;
}
