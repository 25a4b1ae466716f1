import { setMaxListeners } from 'node:events';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { Agent, type Dispatcher } from 'undici';
import { ENVELOPE_BYTES, type Entry, MessageStore, takeBatch, withSentAt } from './batch.js';
import { Emitter } from './emitter.js';
import type { AnalyticsEvents, Callback, DropEvent, Summary } from './events.js';
import {
  AnalyticsError,
  ClosedError,
  CloseTimeoutError,
  ConfigError,
  DeliveryError,
  NetworkError,
  QueueFullError,
} from './errors.js';
import { log } from './log.js';
import {
  type AliasParams,
  buildMessage,
  type GroupParams,
  type IdentifyParams,
  type Message,
  type MessageDefaults,
  type MessageType,
  type PageParams,
  type ParamsByType,
  type ScreenParams,
  type TrackParams,
} from './message.js';
import { describe, LIMITS, type Options, type ResolvedOptions, resolveOptions } from './options.js';
import { Queue } from './queue.js';
import { type RetryPolicy, withRetry } from './retry.js';
import { post } from './transport.js';
import { VERSION } from './version.js';

const gzip = promisify(gzipCallback);

/** Options of `close()`. */
export interface CloseOptions {
  /**
   * Deadline in ms: what is not delivered by then is aborted and reported failed.
   * @default 30000
   */
  timeout?: number;
}

const DEFAULT_CLOSE_TIMEOUT = 30_000;

interface InFlight {
  /** Sequence number of the batch's first message: messages are numbered in call order. */
  start: number;
  entries: Entry[];
}

/**
 * Records analytics calls and sends them to the collection service in batches.
 *
 * Calls validate and serialise their message at once (throwing `ValidationError` on bad input),
 * then queue it; a batch is sent when `flushAt` messages are queued or `flushAfter` ms after the
 * first of them. Delivery failures never throw: they reach callbacks, events and summaries.
 *
 * @example
 * const analytics = new Analytics('WRITE_KEY');
 * analytics.track({ userId: 'u1', event: 'Order Completed', properties: { total: 30 } });
 * await analytics.close();
 */
export class Analytics {
  readonly #options: ResolvedOptions;
  readonly #defaults: MessageDefaults;
  readonly #headers: Record<string, string>;
  readonly #policy: RetryPolicy;
  /** The client's own keep-alive agent; absent when the user supplied a dispatcher. */
  readonly #agent: Agent | undefined;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #events = new Emitter<AnalyticsEvents>();
  readonly #queue = new Queue<Entry>();
  readonly #store = new MessageStore();
  #queuedBytes = 0;
  /** Messages accepted so far; the next message's sequence number. */
  #accepted = 0;
  /** Messages numbered below this are sent even in a partial batch (a flush or the timer asked). */
  #flushUpTo = 0;
  readonly #inFlight: InFlight[] = [];
  /** Messages queued or being sent: the figure `maxQueueSize` bounds. */
  #held = 0;
  /** The `flushAfter` timer; absent whenever the queue is empty, so an idle client holds nothing open. */
  #timer: NodeJS.Timeout | undefined;
  #waiters: { target: number; resolve: () => void }[] = [];
  /** Producers waiting in `ready()` for the queue to have room. */
  #roomWaiters: (() => void)[] = [];
  readonly #totals: Summary = { delivered: 0, failed: 0, dropped: 0 };
  /** Calls are numbered by the `flush()` that will report them; outcomes are counted per number. */
  #epoch = 0;
  readonly #epochs = new Map<number, Summary>();
  readonly #abort = new AbortController();
  #closing: Promise<Summary> | undefined;
  #closed = false;

  /**
   * @param writeKey the source's write key, sent as the basic-auth user.
   * @throws {ConfigError} naming the first invalid option.
   */
  constructor(writeKey: string, options: Options = {}) {
    this.#options = resolveOptions(writeKey, options);
    const o = this.#options;
    this.#defaults = { context: o.context, integrations: o.integrations };
    this.#headers = {
      authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
      'content-type': 'application/json',
      'user-agent': `batched-analytics/${VERSION} (node ${process.version})`,
      ...(o.gzip ? { 'content-encoding': 'gzip' } : {}),
    };
    this.#policy = { retries: o.maxRetries, minDelay: o.minRetryDelay, maxDelay: o.maxRetryDelay };
    this.#agent = o.dispatcher || o.disable ? undefined : new Agent({ connections: o.maxInFlight, keepAliveTimeout: 4_000 });
    this.#dispatcher = o.dispatcher ?? this.#agent;
    // Each batch in flight listens to the close signal once (its request or its retry wait): raise
    // Node's leak warning past that bound, not past its default of 10.
    setMaxListeners(Math.max(10, o.maxInFlight + 1), this.#abort.signal);
  }

  /** Records who a user is and their traits. */
  identify(params: IdentifyParams, callback?: Callback): void {
    this.#enqueue('identify', params, callback);
  }

  /** Records an action a user took. Requires `event`. */
  track(params: TrackParams, callback?: Callback): void {
    this.#enqueue('track', params, callback);
  }

  /** Records a page view. */
  page(params: PageParams, callback?: Callback): void {
    this.#enqueue('page', params, callback);
  }

  /** Records a mobile screen view. */
  screen(params: ScreenParams, callback?: Callback): void {
    this.#enqueue('screen', params, callback);
  }

  /** Associates a user with a group. Requires `groupId`. */
  group(params: GroupParams, callback?: Callback): void {
    this.#enqueue('group', params, callback);
  }

  /** Merges two identities. Requires `userId` and `previousId`. */
  alias(params: AliasParams, callback?: Callback): void {
    this.#enqueue('alias', params, callback);
  }

  /**
   * Listens to `error` (a batch failed, or a callback threw), `flush` (a batch settled),
   * `retry` (a batch will be resent) or `drop` (a call was refused).
   * @returns a function that removes the listener.
   */
  on<K extends keyof AnalyticsEvents>(type: K, listener: (payload: AnalyticsEvents[K]) => void): () => void {
    return this.#events.on(type, listener);
  }

  /**
   * Sends everything queued so far, even partial batches, and resolves once all of it has settled
   * (overlapping calls share the work). Never rejects.
   * @returns the fate of the calls made since the previous `flush()`: each call is reported by the
   * first `flush()` after it (`close()` reports lifetime totals).
   */
  async flush(): Promise<Summary> {
    const epoch = this.#epoch;
    this.#epoch += 1;
    const target = this.#accepted;
    this.#flushUpTo = target;
    this.#pump();
    await this.#settled(target);
    const summary = this.#epochs.get(epoch) ?? { delivered: 0, failed: 0, dropped: 0 };
    this.#epochs.delete(epoch);
    return summary;
  }

  /**
   * Backpressure for producers: resolves at once while the client holds fewer than `maxQueueSize`
   * messages, else once a batch settles and makes room. A loop that awaits it before each call
   * never has a call dropped for a full queue. Resolves at once after `close()`.
   * @example
   * for await (const row of rows) {
   *   await analytics.ready();
   *   analytics.track(row);
   * }
   */
  ready(): Promise<void> {
    if (this.#held < this.#options.maxQueueSize || this.#closed || this.#options.disable) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push(resolve));
  }

  /**
   * Sends what is queued, waits for it by `timeout`, then releases connections. Later calls are
   * dropped (`drop` event, `ClosedError`). Idempotent: every call returns the same promise.
   * Never rejects.
   * @returns the totals over the client's lifetime.
   * @throws {ConfigError} when `timeout` is not an integer >= 0.
   */
  close(options: CloseOptions = {}): Promise<Summary> {
    const timeout = options.timeout ?? DEFAULT_CLOSE_TIMEOUT;
    if (!Number.isInteger(timeout) || timeout < 0) {
      throw new ConfigError('timeout', `Expected \`timeout\` to be an integer >= 0, got ${describe(timeout)}`);
    }
    this.#closing ??= this.#close(timeout);
    return this.#closing;
  }

  async #close(timeout: number): Promise<Summary> {
    log('closing: %d queued, %d batches in flight', this.#queue.length, this.#inFlight.length);
    this.#closed = true;
    this.#clearTimer();
    this.#wakeProducers();
    const deadline = setTimeout(() => this.#abortAll(new CloseTimeoutError(timeout)), timeout);
    await this.flush();
    clearTimeout(deadline);
    if (this.#agent) await (this.#abort.signal.aborted ? this.#agent.destroy() : this.#agent.close());
    log('closed: %o', this.#totals);
    return { ...this.#totals };
  }

  #enqueue<T extends MessageType>(type: T, params: ParamsByType[T], callback: Callback | undefined): void {
    if (callback !== undefined && typeof callback !== 'function') {
      throw new ConfigError('callback', `Expected \`callback\` to be a function, got ${describe(callback)}`);
    }
    const { message, json, bytes } = buildMessage(type, params, this.#defaults);
    if (this.#options.disable) {
      if (callback) process.nextTick(callback);
      return;
    }
    if (this.#closed) {
      this.#drop('closed', new ClosedError(), message, callback);
      return;
    }
    if (this.#held >= this.#options.maxQueueSize) {
      this.#drop('queue-full', new QueueFullError(this.#options.maxQueueSize), message, callback);
      return;
    }
    this.#store.add(json, bytes);
    this.#queue.push({ bytes, callback, epoch: this.#epoch });
    this.#queuedBytes += bytes;
    this.#held += 1;
    this.#accepted += 1;
    if (log.enabled) log('queued %s %s (%d queued)', type, message.messageId, this.#queue.length);
    if (this.#queue.length >= this.#options.flushAt || this.#queuedBytes + ENVELOPE_BYTES + this.#queue.length > LIMITS.batchBytes) {
      this.#pump();
    }
    if (this.#timer === undefined && this.#queue.length > 0) {
      this.#timer = setTimeout(this.#onTimer, this.#options.flushAfter);
    }
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    log('flushAfter (%d ms) elapsed', this.#options.flushAfter);
    this.#flushUpTo = this.#accepted;
    this.#pump();
  };

  /** Starts as many batches as the in-flight budget allows and the queue justifies. */
  #pump(): void {
    const { flushAt, maxInFlight } = this.#options;
    while (this.#inFlight.length < maxInFlight && this.#queue.length > 0) {
      const start = this.#accepted - this.#queue.length;
      const full =
        this.#queue.length >= flushAt || this.#queuedBytes + ENVELOPE_BYTES + this.#queue.length > LIMITS.batchBytes;
      if (!full && start >= this.#flushUpTo) break;
      const { entries, body } = takeBatch(this.#queue, this.#store, flushAt, new Date());
      for (const entry of entries) this.#queuedBytes -= entry.bytes;
      const batch: InFlight = { start, entries };
      this.#inFlight.push(batch);
      void this.#deliver(batch, body);
    }
    if (this.#queue.length === 0) this.#clearTimer();
  }

  async #deliver(batch: InFlight, body: Buffer): Promise<void> {
    const count = batch.entries.length;
    const bytes = body.length;
    let attempts = 0;
    let error: DeliveryError | undefined;
    log('sending %d messages (%d bytes)', count, bytes);
    try {
      const status = await withRetry(
        async (attempt) => {
          attempts = attempt;
          if (attempt > 1) body = withSentAt(body, new Date());
          return post({
            url: this.#options.url,
            body: this.#options.gzip ? await gzip(body) : body,
            headers: this.#headers,
            timeout: this.#options.timeout,
            signal: this.#abort.signal,
            dispatcher: this.#dispatcher,
            fetch: this.#options.fetch,
          });
        },
        this.#policy,
        {
          signal: this.#abort.signal,
          onRetry: ({ attempt, error: cause, delay }) => {
            log('attempt %d of %d messages failed (%s); retrying in %d ms', attempt, count, cause.message, delay);
            this.#events.emit('retry', { count, attempt, delay, error: cause });
          },
        },
      );
      log('delivered %d messages: status %d after %d attempt(s)', count, status, attempts);
    } catch (cause) {
      error = cause instanceof DeliveryError ? cause : new NetworkError(String(cause), cause);
      log('failed to deliver %d messages after %d attempt(s): %s', count, attempts, error.message);
    }
    this.#inFlight.splice(this.#inFlight.indexOf(batch), 1);
    this.#settle(batch.entries, error);
    this.#events.emit('flush', error ? { count, bytes, attempts, error } : { count, bytes, attempts });
    if (error && !this.#events.emit('error', error)) log('no error listener for: %s', error.message);
    this.#pump();
  }

  /** Records the fate of messages that left the queue, tells their callbacks, wakes `flush()`es. */
  #settle(entries: readonly Entry[], error: DeliveryError | undefined): void {
    this.#held -= entries.length;
    const outcome = error ? 'failed' : 'delivered';
    this.#totals[outcome] += entries.length;
    for (const entry of entries) {
      this.#count(entry.epoch)[outcome] += 1;
      if (entry.callback) this.#call(entry.callback, error);
    }
    this.#wakeProducers();
    const settledBelow = this.#settledBelow();
    this.#waiters = this.#waiters.filter((waiter) => {
      if (waiter.target > settledBelow) return true;
      waiter.resolve();
      return false;
    });
  }

  /** Lets as many waiting producers go as there is room for; all of them once closed. */
  #wakeProducers(): void {
    const room = this.#closed ? this.#roomWaiters.length : this.#options.maxQueueSize - this.#held;
    if (room <= 0 || this.#roomWaiters.length === 0) return;
    for (const resolve of this.#roomWaiters.splice(0, room)) resolve();
  }

  #settled(target: number): Promise<void> {
    if (this.#settledBelow() >= target) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ target, resolve }));
  }

  /** Every message numbered below the result has settled. Batches settle out of order. */
  #settledBelow(): number {
    let lowest = this.#accepted - this.#queue.length;
    for (const batch of this.#inFlight) if (batch.start < lowest) lowest = batch.start;
    return lowest;
  }

  /** The `close()` deadline: abort what is in flight and fail what never left the queue. */
  #abortAll(error: CloseTimeoutError): void {
    log('close deadline: aborting %d batches, failing %d queued messages', this.#inFlight.length, this.#queue.length);
    this.#abort.abort(error);
    const entries = this.#queue.drain();
    this.#store.clear();
    this.#queuedBytes = 0;
    this.#settle(entries, error);
    if (entries.length > 0 && !this.#events.emit('error', error)) log('no error listener for: %s', error.message);
  }

  #drop(reason: DropEvent['reason'], error: QueueFullError | ClosedError, message: Message, callback?: Callback): void {
    this.#totals.dropped += 1;
    this.#count(this.#epoch).dropped += 1;
    log('dropped %s %s: %s', message.type, message.messageId, error.message);
    this.#events.emit('drop', { reason, error, message });
    if (callback) this.#call(callback, error);
  }

  #count(epoch: number): Summary {
    let summary = this.#epochs.get(epoch);
    if (summary === undefined) {
      summary = { delivered: 0, failed: 0, dropped: 0 };
      this.#epochs.set(epoch, summary);
    }
    return summary;
  }

  #call(callback: Callback, error: AnalyticsError | undefined): void {
    try {
      callback(error);
    } catch (thrown) {
      log('a callback threw: %O', thrown);
      this.#events.emit('error', new AnalyticsError('A message callback threw', { code: 'ERR_CALLBACK', cause: thrown }));
    }
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}
