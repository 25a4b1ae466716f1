import { ENVELOPE_BYTES, type Entry, MessageStore, messagesOf, takeBatch } from './batch.js';
import { runBeforeSend } from './before-send.js';
import { DeadLetterFile } from './dead-letter.js';
import { Emitter } from '../core/emitter.js';
import { ANALYTICS_EVENT_NAMES, type AnalyticsEvents, type Callback, type DropEvent, type Summary } from './events.js';
import { AnalyticsError, ClosedError, CloseTimeoutError, ConfigError, type DeliveryError, QueueFullError, SpoolFullError, ValidationError } from '../core/errors.js';
import { ClientLog, clientLabel } from './logger.js';
import {
  type AliasParams,
  buildMessage,
  jsonOf,
  type GroupParams,
  type IdentifyParams,
  type MessageDefaults,
  type MessageType,
  type PageParams,
  type ParamsByType,
  prepareMessage,
  type ScreenParams,
  type SerializedMessage,
  type TrackParams,
} from '../core/message.js';
import { describe } from '../core/describe.js';
import { LIMITS } from '../core/limits.js';
import { constructorArguments, type Options, refuseUnknown, type ResolvedOptions, resolveOptions } from './options.js';
import { Queue } from '../core/queue.js';
import { duration, isPlainObject, listening } from '../core/validate.js';
import { BatchSender } from './sender.js';
import { Spool } from './spool.js';
import { type Unheard, UnheardFailures } from './unheard.js';

/** Options of `close()`. */
export interface CloseOptions {
  /**
   * Deadline in ms, at most 2147483647: what is not delivered by then is aborted and reported failed.
   * @default 30000
   */
  timeout?: number;
}

const DEFAULT_CLOSE_TIMEOUT = 30_000;
const CLOSE_OPTION_NAMES: readonly (keyof CloseOptions)[] = ['timeout'];

/**
 * The options argument of `close()` or `flush()`, `of`, as given by a JavaScript caller: anything
 * but a plain object would otherwise be ignored, and a number is most likely a deadline in ms (the
 * posthog-node `shutdown(ms)` habit), which the default deadline would silently replace.
 * @returns the options; none when the argument is `undefined`.
 * @throws {ConfigError} naming `options` when it is no plain object, or naming an unknown option.
 */
function optionsArgument(options: unknown, names: readonly string[], of: 'close()' | 'flush()'): object {
  if (options === undefined) return {};
  if (!isPlainObject(options)) {
    const expected = names.length === 0 ? `${of} to be called without options` : `the options of ${of} to be a plain object`;
    const deadline = typeof options === 'number' ? `: for a deadline of ${options} ms, pass \`{ timeout: ${options} }\`${of === 'close()' ? '' : ' to close()'}` : '';
    throw new ConfigError('options', `Expected ${expected}, got ${describe(options)}${deadline}`);
  }
  refuseUnknown(options, names, of);
  return options;
}

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
 * const analytics = new Analytics('WRITE_KEY'); // or segment's new Analytics({ writeKey: 'WRITE_KEY' })
 * analytics.track({ userId: 'u1', event: 'Order Completed', properties: { total: 30 } });
 * await analytics.close();
 */
export class Analytics {
  readonly #options: ResolvedOptions;
  readonly #defaults: MessageDefaults;
  readonly #log: ClientLog;
  readonly #events: Emitter<AnalyticsEvents>;
  readonly #sender: BatchSender;
  /** Where undelivered messages are appended; absent without the `deadLetter` option. */
  readonly #deadLetter: DeadLetterFile | undefined;
  /** Where accepted messages are kept until they settle; absent without the `spool` option. */
  readonly #spool: Spool | undefined;
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
  #closing: Promise<Summary> | undefined;
  #closed = false;
  /** Where failures nobody hears of go; absent with `silent` or a `logger`. */
  readonly #unheard: UnheardFailures | undefined;

  /**
   * @param writeKey the source's write key, sent as the basic-auth user.
   * @throws {ConfigError} naming the first invalid option.
   */
  constructor(writeKey: string, options?: Options);
  /**
   * Segment's form, for code migrating from `@segment/analytics-node`.
   * @throws {ConfigError} naming the first invalid option.
   */
  constructor(settings: Options & { writeKey: string });
  constructor(first: string | (Options & { writeKey: string }), second?: Options) {
    const args = constructorArguments(first, second);
    this.#options = resolveOptions(args.writeKey, args.options as Options);
    const writeKey = args.writeKey as string;
    const o = this.#options;
    this.#defaults = { context: o.context, integrations: o.integrations };
    const label = clientLabel(writeKey);
    this.#log = new ClientLog(label, o.logger);
    this.#unheard = o.silent || o.logger !== undefined ? undefined : new UnheardFailures(label);
    this.#events = new Emitter((type, error) => this.#log.error('a %s listener threw: %O', type, error));
    this.#sender = new BatchSender(writeKey, o, this.#events, this.#log);
    this.#deadLetter = o.deadLetter === undefined ? undefined : new DeadLetterFile(o.deadLetter, (error) => this.#report(error));
    this.#spool =
      o.spool === undefined || o.disable
        ? undefined
        : new Spool(o.spool, { interval: o.spoolInterval, maxBytes: o.maxSpoolBytes }, (error) => this.#report(error));
    if (this.#spool !== undefined) this.#resume(this.#spool);
  }

  /** Queues what a previous process left in the spool, ahead of every call, and sends it at once. */
  #resume(spool: Spool): void {
    const recovered = spool.recovered();
    if (recovered.length === 0) return;
    for (const { json, bytes } of recovered) {
      this.#store.add(json, bytes);
      this.#queue.push({ bytes, callback: undefined, epoch: this.#epoch });
      this.#queuedBytes += bytes;
    }
    this.#held += recovered.length;
    this.#accepted += recovered.length;
    this.#flushUpTo = this.#accepted;
    this.#log.info('sending %d messages a previous process left in the spool', recovered.length);
    // After the constructor returns, so that listeners attached to the new client see every request.
    queueMicrotask(() => this.#pump());
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
   * Listens to `error` (a batch failed, a callback or hook threw, the dead-letter file could not be
   * written), `flush` (a batch settled), `failed` (a batch was given up, with its messages), `retry`
   * (a batch will be resent), `request`/`response` (each HTTP attempt) or `drop` (a call was refused).
   * @returns a function that removes the listener.
   * @throws {ConfigError} for another event name, or a listener that is no function.
   */
  on<K extends keyof AnalyticsEvents>(type: K, listener: (payload: AnalyticsEvents[K]) => void): () => void {
    listening(ANALYTICS_EVENT_NAMES, type, listener);
    return this.#events.on(type, listener);
  }

  /**
   * Sends everything queued so far, even partial batches, and resolves once all of it has settled
   * (overlapping calls share the work). Never rejects.
   * @throws {ConfigError} when given an argument other than an empty options object (it takes none).
   * @returns the fate of the calls made since the previous `flush()`: each call is reported by the
   * first `flush()` after it (`close()` reports lifetime totals).
   */
  flush(): Promise<Summary> {
    // It takes no options (TypeScript refuses any): a JavaScript caller's `flush({ timeout })` is
    // refused rather than ignored.
    optionsArgument(arguments[0], [], 'flush()');
    return this.#flush();
  }

  async #flush(): Promise<Summary> {
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
   * Sends what is queued, waits for it by `timeout`, then releases connections and waits for the
   * `deadLetter` file to be written. Later calls are dropped (`drop` event, `ClosedError`).
   * Idempotent: every call returns the same promise.
   * Never rejects.
   * @returns the totals over the client's lifetime.
   * @throws {ConfigError} when `timeout` is not an integer from 0 to 2147483647, for an unknown
   * option, or when `options` is no plain object (`close(500)` included: the deadline is `{ timeout: 500 }`).
   */
  close(options?: CloseOptions): Promise<Summary> {
    const timeout = duration('timeout', (optionsArgument(options, CLOSE_OPTION_NAMES, 'close()') as CloseOptions).timeout ?? DEFAULT_CLOSE_TIMEOUT, 0);
    this.#closing ??= this.#close(timeout);
    return this.#closing;
  }

  async #close(timeout: number): Promise<Summary> {
    this.#log.info('closing: %d queued, %d batches in flight', this.#queue.length, this.#inFlight.length);
    this.#closed = true;
    this.#clearTimer();
    this.#wakeProducers();
    const deadline = setTimeout(() => this.#abortAll(new CloseTimeoutError(timeout)), timeout);
    await this.flush();
    clearTimeout(deadline);
    await this.#sender.close();
    this.#spool?.close();
    await this.#deadLetter?.flushed();
    this.#unheard?.close();
    this.#log.info('closed: %o', this.#totals);
    return { ...this.#totals };
  }

  #enqueue<T extends MessageType>(type: T, params: ParamsByType[T], callback: Callback | undefined): void {
    if (callback !== undefined && typeof callback !== 'function') {
      throw new ValidationError('callback', `Expected \`callback\` to be a function, got ${describe(callback)}`);
    }
    let built: SerializedMessage;
    if (this.#options.beforeSend.length === 0) {
      built = buildMessage(type, params, this.#defaults);
    } else {
      const message = prepareMessage(type, params, this.#defaults);
      const outcome = runBeforeSend(this.#options.beforeSend, message);
      if (!('kept' in outcome)) {
        this.#drop({ reason: outcome.reason, error: outcome.error, message }, undefined, callback);
        return;
      }
      built = outcome.kept;
    }
    const { bytes } = built;
    if (this.#options.disable) {
      if (callback) process.nextTick(callback);
      return;
    }
    if (this.#closed) {
      this.#drop({ reason: 'closed', error: new ClosedError(), message: built.message }, jsonOf(built), callback);
      return;
    }
    if (this.#held >= this.#options.maxQueueSize) {
      this.#drop({ reason: 'queue-full', error: new QueueFullError(this.#options.maxQueueSize), message: built.message }, jsonOf(built), callback);
      return;
    }
    if (this.#spool?.full(bytes)) {
      this.#drop({ reason: 'queue-full', error: new SpoolFullError(this.#options.maxSpoolBytes), message: built.message }, jsonOf(built), callback);
      return;
    }
    const at = this.#store.add(built.json, bytes, built.rest);
    this.#spool?.add(this.#store.tail, at, bytes);
    this.#queue.push({ bytes, callback, epoch: this.#epoch });
    this.#queuedBytes += bytes;
    this.#held += 1;
    this.#accepted += 1;
    if (this.#log.debugEnabled) this.#log.debug('queued %s %s (%d queued)', type, built.message.messageId, this.#queue.length);
    if (this.#queue.length >= this.#options.flushAt || this.#queuedBytes + ENVELOPE_BYTES + this.#queue.length > LIMITS.batchBytes) {
      this.#pump();
    }
    if (this.#timer === undefined && this.#queue.length > 0) {
      this.#timer = setTimeout(this.#onTimer, this.#options.flushAfter);
    }
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.#log.debug('flushAfter (%d ms) elapsed', this.#options.flushAfter);
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
      const { entries, body } = this.#takeBatch(flushAt);
      for (const entry of entries) this.#queuedBytes -= entry.bytes;
      const batch: InFlight = { start, entries };
      this.#inFlight.push(batch);
      void this.#deliver(batch, body);
    }
    if (this.#queue.length === 0) this.#clearTimer();
  }

  /**
   * Takes up to `maxCount` messages from the head of the queue into a request body. What the spool
   * has not written yet is written first: a crash in the middle of a flush loses nothing in
   * flight, and the spool copies its lines from the store before the store lends that memory out.
   */
  #takeBatch(maxCount: number): ReturnType<typeof takeBatch> {
    this.#spool?.write();
    return takeBatch(this.#queue, this.#store, maxCount, new Date());
  }

  async #deliver(batch: InFlight, body: Uint8Array): Promise<void> {
    const count = batch.entries.length;
    const bytes = body.length;
    const { body: sent, attempts, error } = await this.#sender.send(body, count);
    this.#inFlight.splice(this.#inFlight.indexOf(batch), 1);
    this.#settle(batch.start, batch.entries, error);
    this.#events.emit('flush', error ? { count, bytes, attempts, error } : { count, bytes, attempts });
    if (error) {
      this.#giveUp(batch.entries, sent, error);
      this.#report(error);
    }
    this.#pump();
  }

  /**
   * Tells `failed` listeners and the dead-letter file which messages were given up. Their JSON is
   * read back from the request body only here, on failure: the success path keeps no copy.
   */
  #giveUp(entries: readonly Entry[], body: Uint8Array, error: DeliveryError): void {
    const observed = this.#events.has('failed');
    if (!observed && this.#deadLetter === undefined) return;
    const lines = messagesOf(body, entries);
    if (observed) this.#events.emit('failed', { messages: lines.map((line) => JSON.parse(line)), error });
    this.#deadLetter?.append(lines);
  }

  /** Records the fate of messages that left the queue, tells their callbacks, wakes `flush()`es. */
  #settle(start: number, entries: readonly Entry[], error: DeliveryError | undefined): void {
    this.#spool?.settle(start, entries.length);
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
    this.#log.warn('close deadline: aborting %d batches, failing %d queued messages', this.#inFlight.length, this.#queue.length);
    this.#sender.abort(error);
    if (this.#queue.length === 0) return;
    while (this.#queue.length > 0) {
      // Cut into bodies as if sent, so that `failed` and the dead-letter file read them like any batch.
      const start = this.#accepted - this.#queue.length;
      const { entries, body } = this.#takeBatch(this.#queue.length);
      this.#settle(start, entries, error);
      this.#giveUp(entries, body, error);
    }
    this.#store.clear();
    this.#queuedBytes = 0;
    this.#report(error);
  }

  /** A refused call: counted, logged, told to `drop` listeners and its callback, and dead-lettered when it was valid. */
  #drop(event: DropEvent, json: string | undefined, callback: Callback | undefined): void {
    this.#totals.dropped += 1;
    this.#count(this.#epoch).dropped += 1;
    this.#log.warn('dropped %s %s: %s', event.message.type, event.message.messageId, event.error.message);
    const heard = this.#events.emit('drop', event) || callback !== undefined;
    if (event.reason === 'before-send') this.#report(event.error);
    // A message lost to a full queue or a late call is a failure too; a filtered one was wanted.
    else if (!heard && event.reason !== 'filtered') this.#unheardFailure(event.error, 'drop');
    if (json !== undefined) this.#deadLetter?.append([json]);
    if (callback) this.#call(callback, event.error);
  }

  /** An `error` event; logged when nobody listens, and written to stderr when nothing logs either. */
  #report(error: AnalyticsError): void {
    if (this.#events.emit('error', error)) return;
    this.#log.error('no error listener for: %s', error.message);
    this.#unheardFailure(error, 'error');
  }

  /** Writes a failure to stderr unless `DEBUG=analytics` already shows it (or `silent`, `logger`). */
  #unheardFailure(error: AnalyticsError, unheard: Unheard): void {
    if (!this.#log.debugEnabled) this.#unheard?.report(error, unheard);
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
      this.#log.error('a callback threw: %O', thrown);
      this.#report(new AnalyticsError('A message callback threw', { code: 'ERR_CALLBACK', cause: thrown }));
    }
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}
