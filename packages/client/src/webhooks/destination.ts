import { listening } from '../core/validate.js';
import { InProgress } from '../core/in-progress.js';
import { encodeText } from '../platform/bytes.js';
import type { Connection } from '../http/connection.js';
import { Emitter } from '../core/emitter.js';
import { ClosedError, DeliveryError, HttpError, NetworkError } from '../core/errors.js';
import { log } from '../platform/log.js';
import { openConnection } from '../http/open-connection.js';
import { type RetryPolicy, retryDelay, withRetry } from '../http/retry.js';
import { RequestAbort } from '../http/request-abort.js';
import { post } from '../http/transport.js';
import { receivedTime, type WebhookInput, type WebhookType } from './body.js';
import { BackingOffError, failureOf, WebhookError, type WebhookFailure } from './error.js';
import { filterTakes } from './filter.js';
import { finish, type RequestOutcome, type SlotWaiter, UrlLane } from './lane.js';
import { type PreparedWebhook, prepareWebhook } from './prepared.js';
import {
  displayUrl,
  type ResolvedWebhookConfig,
  resolveWebhookConfig,
  type WebhookDestinationOptions,
  type WebhookSettings,
} from './settings.js';
import { RateLimit } from './rate-limit.js';
import { RequestSigner } from './signer.js';

/** What `deliver()` resolves with once a message is processed or given up. */
export interface WebhookDeliveryResult {
  /** Whether a receiver answered 2xx. */
  delivered: boolean;
  /** Attempts made; one attempt POSTs to every receiver still worth asking that has room. */
  attempts: number;
  /** True when no receiver's `filter` takes the message: it was sent nowhere (not a failure, no `error`). */
  filtered?: boolean;
  /**
   * Why it was not delivered: a `WebhookError` (its `failures` say what each receiver did; when
   * `retryable` is still true, `retryWindow` ran out), or a `ClosedError` from `close()`.
   */
  error?: Error;
}

/** Payload of `attempt`: one receiver's outcome within one attempt. */
export interface WebhookAttemptEvent {
  /** The delivery: the `id` given to `deliver()`, else the message's `messageId`. */
  id: string;
  messageId: string;
  type: WebhookType;
  /** The attempt, from 1. */
  attempt: number;
  /** Position of the receiver in `settings.webhooks`. */
  index: number;
  url: string;
  /** Whether this receiver answered 2xx. */
  ok: boolean;
  /** The response status; absent when no response came (timeout, network or TLS error). */
  status?: number;
  /** Why this receiver failed; absent when `ok`. */
  error?: Error;
  /** How long the request took, in ms. */
  duration: number;
}

/** Payload of `retry`: no receiver accepted the attempt, and another will follow. */
export interface WebhookRetryEvent {
  /** The delivery: the `id` given to `deliver()`, else the message's `messageId`. */
  id: string;
  messageId: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Wait before the next attempt, in ms. */
  delay: number;
  /** The receivers the next attempt goes to: those whose failure may heal. */
  urls: string[];
  error: WebhookError;
}

/** Payload of `delivered`: a receiver accepted the message; no other is asked again. */
export interface WebhookDeliveredEvent {
  /** The delivery: the `id` given to `deliver()`, else the message's `messageId`. */
  id: string;
  messageId: string;
  attempts: number;
  /** The receiver whose 2xx settled the delivery (the first to answer one). */
  accepted: { index: number; url: string; status: number }[];
}

/** Payload of `failed`: the message was given up. */
export interface WebhookFailedEvent {
  /** The delivery: the `id` given to `deliver()`, else the message's `messageId`. */
  id: string;
  messageId: string;
  attempts: number;
  error: Error;
}

/** Payload of `recovered`: a URL that was backing off answered again, and takes requests from now on. */
export interface WebhookRecoveredEvent {
  /** Position of the receiver in `settings.webhooks`. */
  index: number;
  url: string;
}

/** Events of {@link WebhookDestination}. */
export interface WebhookEvents {
  attempt: WebhookAttemptEvent;
  retry: WebhookRetryEvent;
  delivered: WebhookDeliveredEvent;
  failed: WebhookFailedEvent;
  recovered: WebhookRecoveredEvent;
}

/** The names of {@link WebhookEvents}, for `on()` to check at run time (a record: none is left out). */
const WEBHOOK_EVENT_NAMES = Object.keys({ attempt: true, retry: true, delivered: true, failed: true, recovered: true } satisfies Record<keyof WebhookEvents, true>);

/** What `deliver()` and `deliverPrepared()` accept besides the message. */
export interface DeliverOptions {
  /**
   * When the message was accepted: the body's `receivedAt`, and the start of its `retryWindow`. A
   * string must be an ISO 8601 date (see the `timestamp` of a call).
   * @default now
   */
  receivedAt?: Date | string | number;
  /**
   * Names the delivery in events (`id`): the collector sends one message to several sources.
   * @default the message's `messageId`
   */
  id?: string;
}

/** What `attemptOnce()` accepts besides the message. */
export interface AttemptOnceOptions {
  /** Names the delivery in events. @default the message's `messageId` */
  id?: string;
  /** Which attempt this is, from 1: sets the backoff before the next. */
  attempt: number;
  /**
   * The receivers to ask (positions in `settings.webhooks`), as the previous attempt's `retry` left
   * them; taken as they are, filters aside. @default those whose `filter` takes the message
   */
  targets?: readonly number[];
}

/**
 * What one attempt says comes next: `delivered`; `retry` after `retryIn` ms, to `targets` (the
 * receivers whose failure may heal), of which `waitingFor` are those it waits for only because
 * their URL backs off (its breaker refused the request, or the request was its failed probe: pull
 * the retry forward when `recovered` names one; the others turned this message down and keep its
 * backoff); `failed` for good (every receiver refused it, or its
 * `retryWindow` ran out); `filtered`, when no receiver's `filter` takes it (nothing was sent); or
 * `closed`, when `close()` stopped it (nothing is known of its fate).
 */
export type AttemptResult =
  | { outcome: 'delivered' }
  | { outcome: 'filtered' }
  | { outcome: 'retry'; retryIn: number; targets: number[]; waitingFor: number[]; error: WebhookError }
  | { outcome: 'failed'; error: Error }
  | { outcome: 'closed'; error: Error };

type Accepted = WebhookDeliveredEvent['accepted'][number];
type Rejected = { index: number; url: string; error: Error };
type Outcome = Accepted | Rejected;

/** One attempt of a delivery. */
interface Attempt {
  id: string;
  messageId: string;
  type: WebhookType;
  attempt: number;
  /** The bytes every receiver gets and their `X-Signature`, made once, when the first request starts. */
  signed: () => Promise<Signed>;
  /** The receivers whose probe this attempt's request was, and failed: they are still down. Made on the first. */
  failedProbes?: number[];
}

interface Signed {
  /** What is sent: the body's bytes when signed (signatures are over bytes), else its text as it is. */
  payload: Uint8Array | string;
  signature: Readonly<Record<string, string>>;
}

/**
 * The longest a URL that backs off goes without a probe, in ms, unless `minRetryDelay` is longer
 * (then that) or `maxRetryDelay` shorter (then that): a delivery waiting for a URL that has come
 * back gets through within about this long. One request per URL this often costs a receiver that
 * is down nothing; and only a delivery waiting for the URL makes one.
 */
const PROBE_EVERY_MOST = 5_000;

/**
 * Forwards messages to 1–5 receivers as signed webhook POSTs.
 *
 * One attempt POSTs the same serialised bytes to every receiver that can take it now; the message
 * is delivered as soon as one answers 2xx, and the others are not asked again (requests already
 * sent to them finish in the background, without holding the delivery). Otherwise timeouts,
 * network errors, 3xx (never followed), 5xx, 408 and 429 are retried with jittered exponential backoff until
 * `retryWindow` after the message was received. A receiver that answers any other 4xx, or presents
 * a certificate that does not verify, is dropped from that message's later attempts.
 *
 * Each URL is isolated from the others: at most `maxRequestsPerUrl` requests are in progress to
 * it (a delivery that finds it full goes to the other URLs, or waits for the first free one), and
 * once the requests of `breakerThreshold` different deliveries failed in a row it backs off on its
 * own (no request for `minRetryDelay`, doubling up to 5 s, then one probe request, which a
 * delivery that failed there itself is not given while another waits); when it answers again,
 * `recovered` says so.
 *
 * @example
 * const destination = new WebhookDestination({ webhooks: [{ url: 'https://example.com/hook' }], sharedSecret: 's3cret' });
 * const { delivered, error } = await destination.deliver(message);
 * await destination.close();
 */
export class WebhookDestination {
  readonly #config: ResolvedWebhookConfig;
  readonly #policy: RetryPolicy;
  readonly #lanes: readonly UrlLane[];
  /** Each URL as logs show it (no credentials or query), parsed once rather than per request. */
  readonly #shown: readonly string[];
  readonly #connection: Connection;
  readonly #signer: RequestSigner;
  /** Each URL's `rateLimit`, where it has one. */
  readonly #rateLimits: readonly (RateLimit | undefined)[];
  readonly #events = new Emitter<WebhookEvents>();
  /** Aborted by `close()`: what starts after it does not start. Nothing listens to it. */
  readonly #abort = new AbortController();
  /**
   * The abort switch of each request in progress: `close()` throws them. A listener per request on
   * `#abort`'s signal cost each request more than a fifth of a microsecond, more the more requests
   * are in progress (`addEventListener` looks through every listener a signal has).
   */
  readonly #requests = new Set<RequestAbort>();
  /** The controllers of deliveries waiting to retry, one each for the same reason; `close()` aborts them. */
  readonly #retrying = new Set<AbortController>();
  /** Deliveries not yet settled, and requests still running after theirs settled: `close()` waits for both. */
  readonly #pending = new InProgress();
  #closing: Promise<void> | undefined;

  /**
   * @throws {ConfigError} naming the first invalid entry (e.g. `webhooks[1].url`), before any request.
   */
  constructor(settings: WebhookSettings, options: WebhookDestinationOptions = {}) {
    const config = resolveWebhookConfig(settings, options);
    this.#config = config;
    this.#policy = { retries: Number.POSITIVE_INFINITY, minDelay: config.minRetryDelay, maxDelay: config.maxRetryDelay };
    const limits = {
      maxInProgress: config.maxRequestsPerUrl,
      breakerThreshold: config.breakerThreshold,
      minCooldown: config.minRetryDelay,
      maxCooldown: Math.min(config.maxRetryDelay, Math.max(config.minRetryDelay, PROBE_EVERY_MOST)),
    };
    this.#lanes = config.webhooks.map((_, index) => new UrlLane(index, limits));
    this.#shown = config.webhooks.map(({ url }) => displayUrl(url));
    this.#signer = new RequestSigner(config);
    this.#rateLimits = config.webhooks.map(({ rateLimit }) => (rateLimit === undefined ? undefined : new RateLimit(rateLimit)));
    // rejectUnauthorized is explicit so that NODE_TLS_REJECT_UNAUTHORIZED=0 cannot switch
    // verification off. A socket for every request a lane allows: two URLs on one origin (paths
    // of one host) must not queue in the pool behind each other's slow requests.
    this.#connection = openConnection({
      connections: config.maxRequestsPerUrl * mostPerOrigin(config),
      dispatcher: config.dispatcher,
      proxy: config.proxy,
      fetch: config.fetch,
      strictTls: true,
    });
  }

  /**
   * Sends one message to the receivers, retrying as described on the class. Never rejects: the
   * outcome is the result, and the `attempt`, `retry`, `delivered` and `failed` events.
   * After `close()` it resolves at once, not delivered, with a `ClosedError`.
   * @throws {ValidationError} when the message has no webhook form (see `toWebhookBody`) or cannot
   * be serialised (a BigInt, a cycle).
   */
  deliver(message: WebhookInput, options: DeliverOptions = {}): Promise<WebhookDeliveryResult> {
    const receivedAt = options.receivedAt === undefined ? Date.now() : receivedTime(options.receivedAt);
    return this.deliverPrepared(prepareWebhook(message, receivedAt), options);
  }

  /**
   * Like `deliver()`, for a message already fixed with `prepareWebhook()`: sends its bytes as they
   * are, with its `receivedAt` as the start of the retry window (`options.receivedAt` is ignored).
   */
  deliverPrepared(prepared: PreparedWebhook, options: Pick<DeliverOptions, 'id'> = {}): Promise<WebhookDeliveryResult> {
    const id = options.id ?? prepared.messageId;
    if (this.#abort.signal.aborted) return Promise.resolve(this.#fail(id, prepared.messageId, 0, this.#abort.signal.reason));
    const targets = this.#takers(prepared);
    if (targets.length === 0) return Promise.resolve(this.#filtered(id, prepared));
    return this.#track(this.#send(id, prepared, targets));
  }

  /**
   * Makes one attempt of a message fixed with `prepareWebhook()` and says what comes next, for a
   * caller that keeps the retry schedule itself (the collector keeps it in its store, so that a
   * retry hours away holds no memory and any process may make it). Same lanes, breakers, backoff
   * (by `attempt`, or the receivers' `Retry-After`) and window (from the message's `receivedAt`) as
   * `deliverPrepared()`, and the same events. A delivery the URLs' breakers refused without a
   * request is told to wait longer, up to `maxRetryDelay`: pull it forward on `recovered` (the
   * retry's `waitingFor` says for which URLs).
   * Never rejects.
   */
  attemptOnce(prepared: PreparedWebhook, options: AttemptOnceOptions): Promise<AttemptResult> {
    const id = options.id ?? prepared.messageId;
    if (this.#abort.signal.aborted) return Promise.resolve({ outcome: 'closed', error: this.#abort.signal.reason as Error });
    const targets = options.targets ?? this.#takers(prepared);
    if (targets.length === 0) {
      this.#filtered(id, prepared);
      return Promise.resolve({ outcome: 'filtered' });
    }
    return this.#track(this.#attemptOnce(id, prepared, options.attempt, targets));
  }

  /**
   * Listens to `attempt` (one receiver's outcome in one attempt), `retry` (another attempt will
   * follow), `delivered`, `failed`, or `recovered` (a URL that backed off answered again).
   * @returns a function that removes the listener.
   * @throws {ConfigError} for another event name, or a listener that is no function.
   */
  on<K extends keyof WebhookEvents>(type: K, listener: (payload: WebhookEvents[K]) => void): () => void {
    listening(WEBHOOK_EVENT_NAMES, type, listener);
    return this.#events.on(type, listener);
  }

  /**
   * Each receiver's circuit breaker now, in `settings.webhooks` order, its URL without credentials
   * or query: `open` while the URL gets no request but a probe (after `breakerThreshold` failures
   * in a row, until a request to it succeeds). For monitoring: the collector exports it as a metric.
   */
  breakers(): { url: string; open: boolean }[] {
    return this.#lanes.map((lane) => ({ url: this.#shown[lane.index]!, open: !lane.closed }));
  }

  /**
   * Stops at once: aborts requests in progress and pending retries, resolves every pending
   * `deliver()` as not delivered with a `ClosedError`, then releases connections. Leaves no timer
   * behind. Idempotent: every call returns the same promise. Never rejects.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    log('webhooks: closing with %d deliveries and requests pending', this.#pending.size);
    const reason = new ClosedError('Not delivered: the webhook destination was closed first');
    this.#abort.abort(reason);
    for (const request of this.#requests) request.abort(reason);
    for (const controller of this.#retrying) controller.abort(reason);
    for (const lane of this.#lanes) lane.wakeAll();
    for (const limit of this.#rateLimits) limit?.close(reason);
    await this.#pending.settled();
    // Every delivery has settled: what its connections may still do is read the rest of a 2xx
    // body nobody needs.
    await this.#connection.close(true);
  }

  #track<T>(work: Promise<T>): Promise<T> {
    return this.#pending.track(work);
  }

  /**
   * The bytes every receiver gets and their `X-Signature`, made on first use and kept: an attempt
   * the breakers refuse makes neither, and one waiting for a URL's slot holds neither (a backlog
   * of them would hold a copy of every body).
   */
  #signing(body: string): () => Promise<Signed> {
    if (!this.#signer.signs) {
      // Nothing to sign: the connection encodes the text as it writes it, as for any string body.
      const unsigned = Promise.resolve({ payload: body, signature: {} });
      return () => unsigned;
    }
    let signed: Promise<Signed> | undefined;
    return () =>
      (signed ??= (async () => {
        const payload = encodeText(body);
        return { payload, signature: await this.#signer.bodyHeaders(payload) };
      })());
  }

  async #attemptOnce(id: string, prepared: PreparedWebhook, attempt: number, targets: readonly number[]): Promise<AttemptResult> {
    const { messageId, type, receivedAt } = prepared;
    const context: Attempt = { id, messageId, type, attempt, signed: this.#signing(prepared.body) };
    let result: Accepted | WebhookFailure[];
    try {
      result = await this.#attempt(context, targets);
    } catch (error) {
      // Only close() aborts an attempt: the delivery's fate is the caller's to keep.
      return { outcome: 'closed', error: error as Error };
    }
    if (!Array.isArray(result)) {
      this.#events.emit('delivered', { id, messageId, attempts: attempt, accepted: [result] });
      return { outcome: 'delivered' };
    }
    const failed = new Map(result.map((failure) => [failure.index, failure]));
    const left = targets.filter((index) => failed.get(index)?.error.retryable ?? true);
    const error = new WebhookError([...failed.values()].sort((a, b) => a.index - b.index), this.#probeWait(id, result, left));
    const remaining = receivedAt + this.#config.retryWindow - Date.now();
    if (!error.retryable || remaining <= 0) return { outcome: 'failed', error: this.#fail(id, messageId, attempt, error).error! };
    const retryIn = Math.max(0, Math.min(this.#nextTryIn(error, attempt), remaining));
    const urls = left.map((index) => this.#config.webhooks[index]!.url);
    log('webhooks: %s attempt %d failed; retry %d URL(s) in %d ms', id, attempt, urls.length, retryIn);
    this.#events.emit('retry', { id, messageId, attempt, delay: retryIn, urls, error });
    // What only the URL's backoff holds back (nothing was sent, or the URL's probe failed), as opposed to a receiver that turned this message down.
    const waitingFor = left.filter((index) => failed.get(index)?.error instanceof BackingOffError || context.failedProbes?.includes(index) === true);
    return { outcome: 'retry', retryIn, targets: left, waitingFor, error };
  }

  /** The receivers whose `filter` takes the message, in `settings.webhooks` order. */
  #takers({ type, event }: PreparedWebhook): number[] {
    const targets: number[] = [];
    this.#config.webhooks.forEach(({ filter }, index) => {
      if (filterTakes(filter, type, event)) targets.push(index);
    });
    return targets;
  }

  #filtered(id: string, { type }: PreparedWebhook): WebhookDeliveryResult {
    log('webhooks: %s %s sent nowhere: no URL\'s filter takes it', type, id);
    return { delivered: false, attempts: 0, filtered: true };
  }

  async #send(id: string, prepared: PreparedWebhook, first: number[]): Promise<WebhookDeliveryResult> {
    const { webhooks } = this.#config;
    const { messageId, type, body, receivedAt } = prepared;
    // Signed once over the very bytes every receiver gets, on every attempt.
    const signed = this.#signing(body);
    const latest = new Map<number, WebhookFailure>();
    let targets = first;
    let attempts = 0;
    const run = async (attempt: number) => {
      attempts = attempt;
      const result = await this.#attempt({ id, messageId, type, attempt, signed }, targets);
      if (!Array.isArray(result)) return result;
      for (const failure of result) latest.set(failure.index, failure);
      targets = targets.filter((index) => latest.get(index)?.error.retryable ?? true);
      throw new WebhookError([...latest.values()].sort((a, b) => a.index - b.index), this.#probeWait(id, result, targets));
    };
    log('webhooks: %s %s (%d characters) to %d URL(s)', type, id, body.length, targets.length);
    try {
      let accepted: Accepted;
      try {
        accepted = await run(1);
      } catch (firstError) {
        accepted = await this.#retry(id, messageId, firstError, run, receivedAt, () => targets.map((index) => webhooks[index]!.url));
      }
      log('webhooks: %s delivered after %d attempt(s)', id, attempts);
      this.#events.emit('delivered', { id, messageId, attempts, accepted: [accepted] });
      return { delivered: true, attempts };
    } catch (error) {
      return this.#fail(id, messageId, attempts, error);
    }
  }

  /**
   * Retries a delivery whose first attempt failed. Nearly every delivery succeeds at once, so the
   * controller `close()` aborts its retry wait with is made only here; `withRetry` gets the first
   * failure back as its attempt 1 and applies the policy from there.
   */
  async #retry(
    id: string,
    messageId: string,
    firstError: unknown,
    run: (attempt: number) => Promise<Accepted>,
    receivedAt: number,
    urls: () => string[],
  ): Promise<Accepted> {
    const controller = new AbortController();
    this.#retrying.add(controller);
    if (this.#abort.signal.aborted) controller.abort(this.#abort.signal.reason);
    try {
      return await withRetry(
        (attempt) => (attempt === 1 ? Promise.reject(firstError) : run(attempt)),
        { ...this.#policy, maxRetryTime: Math.max(0, receivedAt + this.#config.retryWindow - Date.now()) },
        {
          signal: controller.signal,
          onRetry: ({ attempt, delay, error }) => {
            log('webhooks: %s attempt %d failed; retrying %d URL(s) in %d ms', id, attempt, urls().length, delay);
            this.#events.emit('retry', { id, messageId, attempt, delay, urls: urls(), error: error as WebhookError });
          },
        },
      );
    } finally {
      this.#retrying.delete(controller);
    }
  }

  /**
   * One attempt: POSTs to every target whose lane has room (waiting for the first free slot when
   * none has), and settles with the first 2xx, or with every failure once all have failed.
   * Targets backing off are skipped; when all are, the attempt fails with their latest failures.
   */
  async #attempt(context: Attempt, targets: readonly number[]): Promise<Accepted | WebhookFailure[]> {
    // A delivery that gets here after close() must not start waiting: nothing would wake it.
    this.#abort.signal.throwIfAborted();
    const lanes = targets.map((index) => this.#lanes[index]!);
    let now = Date.now();
    let started = lanes.filter((lane) => lane.tryAcquire(now, context.id));
    while (started.length === 0) {
      // Only a closed breaker promises a slot soon; the others wait out their cooldown or probe.
      const closed = lanes.filter((lane) => lane.closed);
      if (closed.length === 0) {
        return lanes.map((lane) => ({ index: lane.index, url: this.#config.webhooks[lane.index]!.url, error: backingOff(lane, now) }));
      }
      const first = await this.#waitForSlot(closed);
      this.#abort.signal.throwIfAborted();
      now = Date.now();
      started = [...(first ? [first] : []), ...lanes.filter((lane) => lane !== first && lane.tryAcquire(now, context.id))];
    }
    const { signal } = this.#abort;
    signal.throwIfAborted();
    // Targets full now, but not backing off, are asked in this attempt too, as soon as each hands
    // over a slot: a delivery that found room only at a URL that does not answer would otherwise
    // wait for that URL's timeout and a retry, while the URL that answers frees a slot at once.
    const later = lanes.filter((lane) => !started.includes(lane) && lane.closed);
    return new Promise((resolve, reject) => {
      const failures: WebhookFailure[] = [];
      const waiters: SlotWaiter[] = [];
      let settled = false;
      const settle = (): void => {
        settled = true;
        for (const waiter of waiters) finish(waiter);
      };
      const failed = (failure: WebhookFailure): void => {
        failures.push(failure);
        if (failures.length === started.length + later.length) {
          settle();
          resolve(failures);
        }
      };
      const post = (lane: UrlLane): void => {
        void this.#track(this.#post(context, lane)).then((outcome) => {
          if (settled) return;
          if (signal.aborted) {
            settle();
            return reject(signal.reason);
          }
          if ('error' in outcome) return failed(outcome as WebhookFailure);
          settle();
          resolve(outcome);
        });
      };
      for (const lane of started) post(lane);
      for (const lane of later) {
        const waiter: SlotWaiter = {
          done: false,
          wake: (given) => {
            finish(waiter);
            if (given !== undefined) return post(given);
            // Its breaker opened, or the destination is closing: not asked in this attempt.
            if (signal.aborted) {
              settle();
              return reject(signal.reason);
            }
            failed({ index: lane.index, url: this.#config.webhooks[lane.index]!.url, error: backingOff(lane, Date.now()) });
          },
        };
        waiters.push(waiter);
        lane.wait(waiter);
      }
    });
  }

  /**
   * Resolves with the first of `lanes` to hand over a slot, or undefined when one starts backing
   * off or the destination closes. No abort listener: `close()` wakes every waiter itself.
   */
  #waitForSlot(lanes: readonly UrlLane[]): Promise<UrlLane | undefined> {
    return new Promise((resolve) => {
      const waiter: SlotWaiter = {
        done: false,
        wake: (lane) => {
          // It stays queued at the other lanes until their next sweep.
          finish(waiter);
          resolve(lane);
        },
      };
      for (const lane of lanes) lane.wait(waiter);
    });
  }

  /** POSTs one attempt to one receiver, reports its outcome and frees its lane; never throws. */
  async #post(context: Attempt, lane: UrlLane): Promise<Outcome> {
    const { index } = lane;
    const { url, headers } = this.#config.webhooks[index]!;
    let started = performance.now();
    let outcome: Outcome;
    try {
      // The slot is held while the request waits for its turn: the lane's limit still bounds what waits here.
      const turn = this.#rateLimits[index]?.take();
      if (turn) started = await turn.then(() => performance.now());
      const { payload, signature } = await context.signed();
      // Always a copy: undici's proxy agent adds to the headers it is given.
      const sent = typeof payload === 'string' ? { ...headers } : { ...headers, ...signature, ...(await this.#signer.requestHeaders(context.messageId, payload)) };
      const abort = new RequestAbort();
      this.#requests.add(abort);
      // Closed while it waited for its turn or its signature: it ends at once, as one closed mid-request.
      if (this.#abort.signal.aborted) abort.abort(this.#abort.signal.reason);
      try {
        outcome = { index, url, status: await post({ url, body: payload, headers: sent, timeout: this.#config.timeout, abort, connection: this.#connection }) };
      } finally {
        this.#requests.delete(abort);
      }
    } catch (error) {
      outcome = { index, url, error: failureOf(error as Error) };
    }
    const error = 'error' in outcome ? outcome.error : undefined;
    const { id, messageId, type, attempt } = context;
    if (error !== undefined && lane.probing(id)) (context.failedProbes ??= []).push(index);
    const recovered = lane.release(healthOf(error), Date.now(), id, error as DeliveryError);
    const duration = Math.round(performance.now() - started);
    const event: WebhookAttemptEvent = { id, messageId, type, attempt, index, url, ok: error === undefined, duration };
    if (error !== undefined) {
      event.error = error;
      if (error instanceof HttpError) event.status = error.status;
      log('webhooks: %s attempt %d: %s failed in %d ms: %s', id, attempt, this.#shown[index], duration, error.message);
    } else {
      event.status = (outcome as Accepted).status;
      log('webhooks: %s attempt %d: %s answered %d in %d ms', id, attempt, this.#shown[index], event.status, duration);
    }
    this.#events.emit('attempt', event);
    if (recovered) {
      log('webhooks: %s answers again', this.#shown[index]);
      this.#events.emit('recovered', { index, url });
    }
    return outcome;
  }

  /**
   * When a delivery tries again: after its backoff, or the `Retry-After` its receivers asked for.
   * One every open breaker refused (nothing was sent), and not told to carry the next probe, waits
   * for its URLs instead: a random time between its backoff and `maxRetryDelay`. A backlog then
   * comes back a few deliveries at a time, enough to carry the probes, instead of all of it at
   * each backoff step, each attempt refused again; `recovered` says when to pull them forward.
   */
  #nextTryIn(error: WebhookError, attempt: number): number {
    const own = retryDelay(error, attempt, this.#policy);
    const refused = error.retryAfter === undefined && error.failures.every((failure) => failure.error instanceof BackingOffError);
    return refused ? Math.round(own + Math.random() * Math.max(0, this.#policy.maxDelay - own)) : own;
  }

  /**
   * When the next attempt of a delivery this attempt sent nothing for (every target's breaker
   * refused it) goes out, in ms: when the first probe it is to carry is due. Undefined when it
   * carries none, or a request was sent: then it backs off on its own schedule.
   */
  #probeWait(id: string, failures: readonly WebhookFailure[], targets: readonly number[]): number | undefined {
    const refused = failures.filter(({ error }) => error instanceof BackingOffError).map(({ index }) => index);
    if (targets.length === 0 || !targets.every((index) => refused.includes(index))) return undefined;
    const now = Date.now();
    const waits = targets.flatMap((index) => this.#lanes[index]!.nextTry(now, id) ?? []);
    return waits.length > 0 ? Math.min(...waits) : undefined;
  }

  #fail(id: string, messageId: string, attempts: number, cause: unknown): WebhookDeliveryResult {
    const error = cause instanceof Error ? cause : new NetworkError(String(cause), cause);
    log('webhooks: %s given up after %d attempt(s): %s', id, attempts, error.message);
    this.#events.emit('failed', { id, messageId, attempts, error });
    return { delivered: false, attempts, error };
  }
}

/**
 * What a request's end says about its URL: any answer, a 4xx included, shows it is up; a failure
 * that may heal counts against it; a certificate that does not verify, or `close()`, says nothing.
 */
function healthOf(error: Error | undefined): RequestOutcome {
  if (error === undefined || error instanceof HttpError) return error?.retryable ? 'failed' : 'ok';
  return error instanceof DeliveryError && error.retryable ? 'failed' : 'neutral';
}

/** Why a lane gets no request now: its breaker is open. */
function backingOff(lane: UrlLane, now: number): DeliveryError {
  return new BackingOffError(lane.reopensIn(now), lane.lastFailure);
}

/** The most URLs that share one origin. */
function mostPerOrigin(config: ResolvedWebhookConfig): number {
  const counts = new Map<string, number>();
  for (const { url } of config.webhooks) {
    const origin = new URL(url).origin;
    counts.set(origin, (counts.get(origin) ?? 0) + 1);
  }
  return Math.max(...counts.values());
}
