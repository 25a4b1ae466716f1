/**
 * The most bytes of a response body read, whatever its status: an error report keeps the first 500
 * characters of its message and a 2xx body is dropped, so only a receiver that answers more pays
 * for it. The rest is never read: that connection is closed instead, and the next request opens
 * another. Both a 500 with a gigabyte body and a 200 whose body never ends count as their status.
 * @default 65536 (64 KiB)
 */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

/**
 * A body's first `RESPONSE_BODY_LIMIT` bytes as UTF-8 text (a character cut in two at the limit
 * becomes U+FFFD). Stopping early ends the iteration, which ends the connection. Never rejects: a
 * body cut short (the request's timeout or abort, a reset) gives what had arrived.
 */
export async function readStart(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_BODY_LIMIT) break;
    }
  } catch {
    // Cut short: what arrived is still the receiver's answer.
  }
  const bytes = new Uint8Array(Math.min(size, RESPONSE_BODY_LIMIT));
  let at = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - at);
    bytes.set(part, at);
    at += part.length;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * Reads and drops a body; past `RESPONSE_BODY_LIMIT` bytes, ends the iteration (and so the
 * connection) instead. Never rejects.
 */
export async function drain(body: AsyncIterable<Uint8Array>): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > RESPONSE_BODY_LIMIT) break;
    }
  } catch {
    // Cut short: the status already said what happened.
  }
}
