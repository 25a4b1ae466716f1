import type { Connection } from './connection.js';
import { DeliveryError, HttpError, NetworkError, TimeoutError } from '../core/errors.js';
import { RequestAbort } from './request-abort.js';

/** One POST. Durations in ms. */
export interface PostRequest {
  url: string;
  body: string | Uint8Array;
  headers: Record<string, string>;
  /**
   * Abort the attempt (and report a `TimeoutError`) after this long. A status that arrived in time
   * still counts: the timeout then only ends the reading of its body.
   */
  timeout: number;
  /** Aborts the attempt with the signal's reason (e.g. a `close()` deadline). */
  signal?: AbortSignal;
  /**
   * The attempt's abort switch, for a caller that ends its requests itself rather than through a
   * shared signal (a listener per request on one signal costs more the more requests are in
   * progress); absent, the attempt makes its own.
   */
  abort?: RequestAbort;
  /** How the request leaves the process. */
  connection: Connection;
}

/** Longest part of an error response kept in `HttpError.body`. */
const ERROR_BODY_CHARS = 500;

/**
 * Sends one POST and resolves with the status when it is 2xx, as soon as the status arrives.
 * @throws {HttpError} any other status, with the response's message and `Retry-After`.
 * @throws {TimeoutError} no complete response within `timeout`.
 * @throws {NetworkError} the request could not be made (refused, reset, DNS, TLS).
 * @throws the signal's reason when it aborts.
 */
export async function post(req: PostRequest): Promise<number> {
  const abort = req.abort ?? new RequestAbort();
  const timer = setTimeout(() => abort.abort(new TimeoutError(req.timeout)), req.timeout);
  const onAbort = () => abort.abort(req.signal?.reason);
  if (req.signal?.aborted) onAbort();
  else req.signal?.addEventListener('abort', onAbort, { once: true });
  let draining: Promise<void> | undefined;
  try {
    const { url, body, headers } = req;
    const response = await req.connection.send({ url, body, headers, abort });
    if (response.status >= 200 && response.status < 300) {
      // The status is the answer: its body is read and dropped after (so that the connection can
      // carry another request), within the same timeout, without holding up the caller.
      draining = response.discard();
      return response.status;
    }
    const text = await response.text();
    throw new HttpError(response.status, errorMessageOf(text), parseRetryAfter(response.retryAfter));
  } catch (error) {
    // The receiver answered: an abort while its body was read does not change what it said.
    if (error instanceof HttpError) throw error;
    if (abort.aborted) throw abort.reason;
    if (error instanceof DeliveryError) throw error;
    throw new NetworkError(`POST ${new URL(req.url).origin} failed: ${describeCause(error)}`, error);
  } finally {
    const done = () => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    };
    if (draining === undefined) done();
    else void draining.then(done, done);
  }
}

/** `Retry-After` in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The `message` or `error` of a JSON error body, else the body's start. */
function errorMessageOf(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object') {
      const { message, error } = parsed as { message?: unknown; error?: unknown };
      if (typeof message === 'string') return message;
      if (typeof error === 'string') return error;
    }
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.slice(0, ERROR_BODY_CHARS).trim();
}

/** fetch reports "fetch failed" and hides the reason in `cause`: show the innermost one. */
function describeCause(error: unknown): string {
  let innermost = error;
  while (innermost instanceof Error && innermost.cause instanceof Error) innermost = innermost.cause;
  if (!(innermost instanceof Error)) return String(error);
  const code = (innermost as NodeJS.ErrnoException).code;
  return code && !innermost.message.includes(code) ? `${code}: ${innermost.message}` : innermost.message;
}
