import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { AnalyticsError } from 'batched-analytics/internal';

/**
 * A request the collector refuses, with the status and JSON body it answers. Client errors only;
 * anything else is a 500.
 */
export class RequestError extends AnalyticsError {
  /** The HTTP status to answer with. */
  readonly status: number;
  /** The field at fault, e.g. `batch[2].userId`; absent when the request as a whole is wrong. */
  readonly field: string | undefined;

  constructor(status: number, code: string, message: string, field?: string) {
    super(message, { code });
    this.status = status;
    this.field = field;
  }
}

/**
 * The client went away (its connection closed or reset) before its request body ended: nothing is
 * recorded, and nothing can be answered. Not a failure of the collector.
 */
export class RequestAbortedError extends AnalyticsError {
  constructor(cause: unknown) {
    super('The client closed the connection before its request body ended; nothing was recorded', { code: 'ERR_REQUEST_ABORTED', cause });
  }
}

/** A 400 naming the field at fault. */
export function invalid(field: string, message: string): RequestError {
  return new RequestError(400, 'ERR_VALIDATION', message, field);
}

/**
 * Reads a request body of at most `limit` bytes (after gzip decoding, and before it). Refuses a
 * larger one as soon as it is known to be larger: from `Content-Length`, or once the bytes read
 * pass the limit, without reading the rest.
 * @throws {RequestError} 413 for a body over the limit, 415 for an unknown `Content-Encoding`, 400
 * for a gzip body that does not decode.
 * @throws {RequestAbortedError} when the client goes away before the body ends.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) throw tooLarge(limit);
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip') {
    throw new RequestError(415, 'ERR_CONTENT_ENCODING', `Expected \`Content-Encoding\` to be gzip or absent, got \`${encoding}\``);
  }
  const raw = await collect(req, limit).catch((error: unknown) => {
    // Past the limit is the one refusal; any other end of the request stream is its socket's.
    throw error instanceof RequestError ? error : new RequestAbortedError(error);
  });
  if (encoding === 'identity') return raw;
  const gunzip = createGunzip();
  gunzip.end(raw);
  try {
    return await collect(gunzip, limit);
  } catch (error) {
    if (error instanceof RequestError) throw error;
    throw new RequestError(400, 'ERR_GZIP', `Expected a gzip body: ${(error as Error).message}`);
  } finally {
    gunzip.destroy();
  }
}

/**
 * Buffers a stream up to `limit` bytes. Past it, stops reading (pausing, not destroying, so that a
 * request's socket can still carry the 413: see {@link discardRest}) and rejects.
 */
function collect(stream: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const finish = (error?: Error) => {
      stream.off('data', onData).off('end', onEnd).off('error', finish).off('close', onClose);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks, length));
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      chunks.push(chunk);
      if (length > limit) {
        stream.pause();
        finish(tooLarge(limit));
      }
    };
    const onEnd = () => finish();
    const onClose = () => finish(new Error('the request was aborted before its body ended'));
    stream.on('data', onData).on('end', onEnd).on('error', finish).on('close', onClose);
  });
}

/**
 * How much more of a refused body is read and dropped, keeping the connection, so that a client
 * still sending gets to read the 413: closing a socket with unread bytes makes the kernel answer
 * with a reset, which the client sees instead of the answer. (Half-closing first did not help: the
 * client's own socket then fails its write.) The server's `requestTimeout` bounds the time.
 */
export const DRAIN_LIMIT = 16 * 1024 * 1024;

/**
 * After a 413, reads the rest of the request body and drops it; past {@link DRAIN_LIMIT} more
 * bytes the connection is cut.
 * @returns false when the declared `Content-Length` is already past that bound: then the answer
 * should close the connection rather than read it all.
 */
export function discardRest(req: IncomingMessage): boolean {
  if (req.complete) return true;
  if (Number(req.headers['content-length']) > DRAIN_LIMIT) return false;
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_LIMIT) req.socket.destroy();
  });
  req.resume();
  return true;
}

function tooLarge(limit: number): RequestError {
  return new RequestError(413, 'ERR_BODY_TOO_LARGE', `Expected a request body of at most ${limit} bytes`);
}

/** Answers with a JSON body. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Answers a refused request: `{ error, code, field? }`. */
export function sendError(res: ServerResponse, error: RequestError, headers: Record<string, string> = {}): void {
  const body = error.field === undefined ? { error: error.message, code: error.code } : { error: error.message, code: error.code, field: error.field };
  sendJson(res, error.status, body, headers);
}
