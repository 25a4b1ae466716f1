import type { Dispatcher } from 'undici';
import type { Connection, Outgoing, RawResponse } from './connection.js';
import type { FetchLike } from './connection.js';
import { drain, readStart } from './response-body.js';

/** Sends with a fetch-compatible function: the runtime's own outside Node, or the user's. */
export class FetchConnection implements Connection {
  readonly #fetch: FetchLike;
  readonly #dispatcher: Dispatcher | undefined;

  /** @param dispatcher passed on in `init`, for a user's fetch that routes through undici. */
  constructor(fetch: FetchLike, dispatcher?: Dispatcher) {
    this.#fetch = fetch;
    this.#dispatcher = dispatcher;
  }

  async send({ url, body, headers, abort }: Outgoing): Promise<RawResponse> {
    // fetch takes only an AbortSignal; it stays linked while the response is read.
    const controller = new AbortController();
    if (abort.aborted) controller.abort(abort.reason);
    else abort.once('abort', () => controller.abort(abort.reason));
    const { signal } = controller;
    const res = await this.#fetch(url, { method: 'POST', headers, body: body as BodyInit, signal, dispatcher: this.#dispatcher });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      text: () => readStart(chunksOf(res.body)),
      discard: () => drain(chunksOf(res.body)),
    };
  }

  async close(): Promise<void> {
    // fetch owns its sockets: nothing of ours to release.
  }
}

/**
 * A body's chunks, read with a reader rather than `for await` (which not every runtime's streams
 * have). Stopping early cancels the stream, which ends the connection.
 */
async function* chunksOf(body: ReadableStream<Uint8Array> | null): AsyncGenerator<Uint8Array> {
  if (body === null) return;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Settled at once when the body ended or failed; otherwise this is what closes the connection.
    reader.cancel().catch(() => undefined);
  }
}
