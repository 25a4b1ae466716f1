import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SourceConfig } from '../config/config.js';
import { RequestError } from './http.js';

/**
 * Request headers a page may send: the write key (`Authorization`), the body's type and encoding,
 * and analytics.js's retry count (`X-Retry-Count`, on a batch sent again).
 */
export const CORS_REQUEST_HEADERS = 'authorization, content-type, content-encoding, x-retry-count';

/** How long a browser keeps a preflight's answer, in s; Chromium keeps at most 2 h of it. */
export const CORS_MAX_AGE = 86_400;

/**
 * Which web pages may send to the ingestion routes and read the settings: any origin (as the
 * service allows), except for a source that lists `allowedOrigins`. A preflight names no write
 * key, so it is answered for an origin that any source allows; the request itself is then
 * refused (403, nothing recorded) when its source does not allow the origin, since a browser
 * that only cannot read the answer would still have delivered the message.
 */
export class Cors {
  readonly #anyOrigin: boolean;
  readonly #origins: ReadonlySet<string>;

  constructor(sources: readonly SourceConfig[]) {
    this.#anyOrigin = sources.some((source) => source.allowedOrigins === undefined);
    this.#origins = new Set(sources.flatMap((source) => source.allowedOrigins ?? []));
  }

  /** Answers a preflight: 204 allowing the origin, `method` and the headers a client sends; 403 for an origin no source allows. */
  preflight(req: IncomingMessage, res: ServerResponse, method: string): void {
    const origin = req.headers.origin;
    if (origin === undefined || !this.#someSourceAllows(origin)) throw refused(origin);
    res
      .writeHead(204, {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': method,
        'access-control-allow-headers': CORS_REQUEST_HEADERS,
        'access-control-max-age': String(CORS_MAX_AGE),
        vary: 'Origin',
      })
      .end();
  }

  /**
   * Lets a page read the answer to its request, errors included, when some source allows its
   * origin; the source, once known, decides with {@link check}.
   */
  open(req: IncomingMessage, res: ServerResponse): void {
    const origin = req.headers.origin;
    res.setHeader('vary', 'Origin');
    if (origin !== undefined && this.#someSourceAllows(origin)) allow(res, origin);
  }

  /**
   * Refuses a request from a page of an origin `source` does not list.
   * @throws {RequestError} 403 `ERR_ORIGIN`, without CORS headers.
   */
  check(req: IncomingMessage, res: ServerResponse, source: SourceConfig): void {
    const origin = req.headers.origin;
    if (origin === undefined || source.allowedOrigins === undefined || source.allowedOrigins.includes(origin)) {
      if (origin !== undefined) allow(res, origin);
      return;
    }
    res.removeHeader('access-control-allow-origin');
    res.removeHeader('access-control-expose-headers');
    throw refused(origin);
  }

  #someSourceAllows(origin: string): boolean {
    return this.#anyOrigin || this.#origins.has(origin);
  }
}

function allow(res: ServerResponse, origin: string): void {
  res.setHeader('access-control-allow-origin', origin);
  // A page that is told to wait (503, 429) can read for how long.
  res.setHeader('access-control-expose-headers', 'retry-after');
}

function refused(origin: string | undefined): RequestError {
  if (origin === undefined) return new RequestError(403, 'ERR_ORIGIN', 'Expected a preflight to name its page\'s `Origin`, got none');
  return new RequestError(403, 'ERR_ORIGIN', `Pages of the origin ${JSON.stringify(origin)} may not send here: it is not in the source's \`allowedOrigins\``);
}
