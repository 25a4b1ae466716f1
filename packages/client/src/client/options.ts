import type { Dispatcher } from 'undici';
import { type FetchLike, optionalDispatcher } from '../http/connection.js';
import { LIMITS } from '../core/limits.js';
import { boolean, duration, integer, isPlainObject, optionalFunction, optionalWithMethods, parseHttpUrl } from '../core/validate.js';
import { closest } from '../core/closest.js';
import { describe, describeUrl } from '../core/describe.js';
import { ConfigError, ValidationError } from '../core/errors.js';
import type { Integrations } from '../core/integrations.js';
import { LOG_LEVELS, type Logger } from './logger.js';
import { checkDefaults, type Message } from '../core/message.js';

/**
 * Sees every message at the call, complete as it would be sent, before it is serialised: returns
 * it (changed or not) to keep it, or `null` to drop it.
 */
export type BeforeSend = (message: Message) => Message | null;

/**
 * Options of {@link Analytics}. Every duration is in milliseconds, at most 2147483647 (about 24.8
 * days): a timer fires a longer wait after 1 ms. `maxRateLimitDuration` is no timer's and may be longer.
 */
export interface Options {
  /**
   * Base URL of the collection service; batches are POSTed to `${endpoint}/v1/batch`.
   * @default 'https://api.segment.io'
   */
  endpoint?: string;
  /**
   * Messages queued before a batch is sent. `1` sends every call at once (development).
   * @default 20
   */
  flushAt?: number;
  /** Alias of `flushAt` (the Go client's `Size`). */
  size?: number;
  /**
   * How long a queued message may wait for `flushAt` companions before its batch is sent, in ms.
   * @default 5000
   */
  flushAfter?: number;
  /** Alias of `flushAfter` (the Go client's `Interval`). */
  flushInterval?: number;
  /**
   * Messages held in memory (queued or being sent). Calls beyond it are dropped and reported
   * (`drop` event, callback with `QueueFullError`, `dropped` in summaries).
   * @default 10000
   */
  maxQueueSize?: number;
  /**
   * Retries of a failed batch (network error, timeout, 5xx, 408, 429) before it is reported failed.
   * Waiting out a 429 or 503 with `Retry-After` is no retry (see `maxRateLimitDuration`).
   * @default 10
   */
  maxRetries?: number;
  /**
   * Delay before the first retry, in ms; it doubles on each retry (with jitter) up to `maxRetryDelay`.
   * @default 100
   */
  minRetryDelay?: number;
  /**
   * Longest delay between two attempts, in ms. A 429 or 503 with `Retry-After` is not capped by it:
   * it pauses the client instead (see `maxRateLimitDuration`).
   * @default 30000
   */
  maxRetryDelay?: number;
  /**
   * How long, in ms, the service may keep the client waiting with 429 or 503 answers carrying
   * `Retry-After`, counted from the first such answer since the last success. Until then every
   * batch waits for the time the service gave, without spending retries; a wait that would end
   * later fails its batch with a `RateLimitError`.
   * @default 43200000 (12 hours)
   */
  maxRateLimitDuration?: number;
  /**
   * Per-request timeout, in ms. A status that arrived in time counts even when its body is still
   * arriving: the timeout then only stops the reading.
   * @default 10000
   */
  timeout?: number;
  /**
   * Batches being sent at the same time; further batches wait in the queue.
   * @default 4
   */
  maxInFlight?: number;
  /**
   * Compress request bodies with gzip (`Content-Encoding: gzip`). Pays off on slow links; costs CPU.
   * @default false
   */
  gzip?: boolean;
  /**
   * Integrations merged under every call's own `integrations`: checked as a call's are, and
   * refused here when a call would refuse them.
   * @default {}
   */
  integrations?: Integrations;
  /**
   * Context merged under every call's own `context`: checked as a call's is, and refused here
   * when it cannot be serialised.
   * @default {}
   */
  context?: Record<string, unknown>;
  /**
   * An undici `Dispatcher` (a proxy agent, a custom `Agent`), with its `request` and `dispatch`
   * methods. The client neither closes nor destroys it.
   * @default a keep-alive `Agent` with `maxInFlight` connections, owned and closed by the client
   */
  dispatcher?: Dispatcher;
  /**
   * Send through the proxies the environment names: `HTTPS_PROXY` for https endpoints, `HTTP_PROXY`
   * for http ones, none for hosts `NO_PROXY` lists (lower-case forms too; undici's
   * `EnvHttpProxyAgent`). `false` ignores them. A `dispatcher` wins over both.
   * @default true
   */
  proxy?: boolean;
  /**
   * Send with this fetch-compatible function instead of undici's `request` (instrumentation,
   * mocking with msw, other runtimes). It receives the `dispatcher` in its init.
   * @default undefined (undici `request`, about 3x less CPU per request than fetch)
   */
  fetch?: FetchLike;
  /**
   * Validate calls, then discard them without touching the network (tests, local development).
   * @default false
   */
  disable?: boolean;
  /**
   * Hooks run in order at each call on the complete message (after validation and defaults, before
   * serialisation and the size check) to enrich, scrub or drop it. What a hook returns is validated
   * like a call; `null` drops the message (`drop` event, reason `'filtered'`). A hook that throws or
   * returns an invalid message never throws at the call: the message is dropped (reason
   * `'before-send'`) and the error reported.
   * @default []
   */
  beforeSend?: BeforeSend | readonly BeforeSend[];
  /**
   * A file every message finally not delivered is appended to, one JSON line each, exactly as it
   * would have been sent (same `messageId` and `timestamp`): failed batches, and calls dropped for a
   * full queue, after `close()` or at its deadline. Not the ones `beforeSend` dropped.
   * `batched-analytics import FILE` sends it again. `close()` resolves once the file is written.
   * @default undefined (none)
   */
  deadLetter?: string;
  /**
   * A directory where every accepted call is kept until it settles, so that a process that dies
   * (kill -9, OOM, a deploy that does not wait) loses at most the calls of its last `spoolInterval`
   * ms: the next client given the same directory sends what is left first, with the original
   * messageIds. One client (one process) per directory: another is refused with `SpoolLockedError`.
   * On a full or read-only disk the client goes on in memory (an `error` event, once).
   * @default undefined (calls are held in memory only)
   */
  spool?: string;
  /**
   * Longest time, in ms, between a call and its write to the `spool`: what a crash can lose.
   * @default 100
   */
  spoolInterval?: number;
  /**
   * Most bytes the `spool` directory may hold; calls past it are dropped like those past
   * `maxQueueSize` (`drop` event, `SpoolFullError`).
   * @default 67108864 (64 MiB)
   */
  maxSpoolBytes?: number;
  /**
   * Never write to stderr. Without it, a failure nobody hears of (a failed batch without an `error`
   * listener, a dropped call without a `drop` listener or callback; no `logger`, no
   * `DEBUG=analytics`) is written to stderr: once per error code per minute.
   * @default false
   */
  silent?: boolean;
  /**
   * Also send the library's log lines to this logger (`console`, pino, winston): retries at `warn`,
   * batches given up at `error`, queueing at `debug`. `DEBUG=analytics` works with or without it.
   * @default undefined (only `DEBUG=analytics`)
   */
  logger?: Logger;
}

/** Options after defaults and aliases are applied. */
export interface ResolvedOptions {
  readonly endpoint: string;
  readonly url: string;
  readonly flushAt: number;
  readonly flushAfter: number;
  readonly maxQueueSize: number;
  readonly maxRetries: number;
  readonly minRetryDelay: number;
  readonly maxRetryDelay: number;
  readonly maxRateLimitDuration: number;
  readonly timeout: number;
  readonly maxInFlight: number;
  readonly gzip: boolean;
  readonly integrations: Integrations;
  readonly context: Record<string, unknown>;
  readonly dispatcher: Dispatcher | undefined;
  readonly proxy: boolean;
  readonly fetch: FetchLike | undefined;
  readonly disable: boolean;
  readonly beforeSend: readonly BeforeSend[];
  readonly deadLetter: string | undefined;
  readonly spool: string | undefined;
  readonly spoolInterval: number;
  readonly maxSpoolBytes: number;
  readonly logger: Logger | undefined;
  readonly silent: boolean;
}

/** Defaults, declared once. */
export const DEFAULTS = {
  endpoint: 'https://api.segment.io',
  flushAt: 20,
  flushAfter: 5_000,
  maxQueueSize: 10_000,
  maxRetries: 10,
  minRetryDelay: 100,
  maxRetryDelay: 30_000,
  maxRateLimitDuration: 12 * 60 * 60 * 1000,
  timeout: 10_000,
  maxInFlight: 4,
  gzip: false,
  proxy: true,
  disable: false,
  silent: false,
  spoolInterval: 100,
  maxSpoolBytes: 64 * 1024 * 1024,
} as const;

/** Every option's name: typed so that an option added to {@link Options} must be listed here. */
const OPTION_NAMES = Object.keys({
  endpoint: true,
  flushAt: true,
  size: true,
  flushAfter: true,
  flushInterval: true,
  maxQueueSize: true,
  maxRetries: true,
  minRetryDelay: true,
  maxRetryDelay: true,
  maxRateLimitDuration: true,
  timeout: true,
  maxInFlight: true,
  gzip: true,
  integrations: true,
  context: true,
  dispatcher: true,
  proxy: true,
  fetch: true,
  disable: true,
  beforeSend: true,
  deadLetter: true,
  spool: true,
  spoolInterval: true,
  maxSpoolBytes: true,
  silent: true,
  logger: true,
} satisfies Record<keyof Options, true>);

/**
 * Other clients' names for an option (docs/migrating.md): spelling alone would not lead from them
 * to ours. `host`, `path`, `maxEventsInBatch`, `httpRequestTimeout` and `httpClient` are
 * `@segment/analytics-node`'s; `batchSize` is the common word for `flushAt`.
 */
const OTHER_CLIENTS_NAMES = new Map<string, keyof Options>([
  ['host', 'endpoint'],
  ['path', 'endpoint'],
  ['batchSize', 'flushAt'],
  ['maxEventsInBatch', 'flushAt'],
  ['httpRequestTimeout', 'timeout'],
  ['httpClient', 'dispatcher'],
]);

/** Routes of the service an endpoint must not end in: it is the base the client appends `/v1/batch` to. */
const OTHER_ROUTE = /\/v1\/(identify|track|page|screen|group|alias|import)$/;

/**
 * The write key and options from either constructor form: the client's `(writeKey, options)` or
 * segment's `({ writeKey, ...options })`.
 * @throws {ConfigError} when both forms are mixed.
 */
export function constructorArguments(first: unknown, second: unknown): { writeKey: unknown; options: unknown } {
  if (!isPlainObject(first)) return { writeKey: first, options: second ?? {} };
  if (second !== undefined) {
    throw new ConfigError('options', 'Expected either new Analytics(writeKey, options) or new Analytics({ writeKey, ...options }), got both');
  }
  const { writeKey, ...options } = first;
  return { writeKey, options };
}

/** @throws {ConfigError} naming the first invalid option. */
export function resolveOptions(writeKey: unknown, input: Options = {}): ResolvedOptions {
  if (typeof writeKey !== 'string' || writeKey.length === 0) {
    throw new ConfigError('writeKey', `Expected \`writeKey\` to be a non-empty string, got ${describe(writeKey)}`);
  }
  if (input === null || typeof input !== 'object') {
    throw new ConfigError('options', `Expected \`options\` to be an object, got ${describe(input)}`);
  }
  refuseUnknown(input);
  const flushAt = alias(input, 'flushAt', 'size') ?? DEFAULTS.flushAt;
  const flushAfter = alias(input, 'flushAfter', 'flushInterval') ?? DEFAULTS.flushAfter;
  const endpoint = input.endpoint ?? DEFAULTS.endpoint;

  integer('flushAt', flushAt, 1);
  duration('flushAfter', flushAfter, 1);
  const maxQueueSize = integer('maxQueueSize', input.maxQueueSize ?? DEFAULTS.maxQueueSize, 1);
  const maxRetries = integer('maxRetries', input.maxRetries ?? DEFAULTS.maxRetries, 0);
  const minRetryDelay = duration('minRetryDelay', input.minRetryDelay ?? DEFAULTS.minRetryDelay, 0);
  const maxRetryDelay = duration('maxRetryDelay', input.maxRetryDelay ?? DEFAULTS.maxRetryDelay, minRetryDelay);
  const maxRateLimitDuration = integer('maxRateLimitDuration', input.maxRateLimitDuration ?? DEFAULTS.maxRateLimitDuration, 0);
  const timeout = duration('timeout', input.timeout ?? DEFAULTS.timeout, 1);
  const maxInFlight = integer('maxInFlight', input.maxInFlight ?? DEFAULTS.maxInFlight, 1);
  if (maxQueueSize < flushAt) {
    throw new ConfigError('maxQueueSize', `Expected \`maxQueueSize\` to be >= \`flushAt\` (${flushAt}), got \`${maxQueueSize}\``);
  }
  const defaults = defaultsForCalls(input.context === undefined ? {} : input.context, input.integrations === undefined ? {} : input.integrations);

  return Object.freeze({
    endpoint,
    url: batchUrl(endpoint),
    flushAt,
    flushAfter,
    maxQueueSize,
    maxRetries,
    minRetryDelay,
    maxRetryDelay,
    maxRateLimitDuration,
    timeout,
    maxInFlight,
    gzip: boolean('gzip', input.gzip ?? DEFAULTS.gzip),
    integrations: defaults.integrations,
    context: defaults.context,
    dispatcher: optionalDispatcher('dispatcher', input.dispatcher),
    proxy: boolean('proxy', input.proxy ?? DEFAULTS.proxy),
    fetch: optionalFunction('fetch', input.fetch),
    disable: boolean('disable', input.disable ?? DEFAULTS.disable),
    beforeSend: hooks(input.beforeSend),
    deadLetter: optionalPath('deadLetter', input.deadLetter),
    spool: optionalPath('spool', input.spool),
    spoolInterval: duration('spoolInterval', input.spoolInterval ?? DEFAULTS.spoolInterval, 1),
    maxSpoolBytes: integer('maxSpoolBytes', input.maxSpoolBytes ?? DEFAULTS.maxSpoolBytes, 1),
    logger: optionalWithMethods('logger', input.logger, LOG_LEVELS),
    silent: boolean('silent', input.silent ?? DEFAULTS.silent),
  });
}

function batchUrl(endpoint: unknown): string {
  const url = parseHttpUrl(endpoint);
  if (url === undefined) {
    throw new ConfigError('endpoint', `Expected \`endpoint\` to be an absolute http(s) URL, got ${describeUrl(endpoint)}`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (OTHER_ROUTE.test(path)) {
    throw new ConfigError(
      'endpoint',
      `Expected \`endpoint\` to be the base URL of the service (batches go to its /v1/batch), got \`${JSON.stringify(endpoint)}\`: drop the route`,
    );
  }
  // An endpoint copied from the service's docs often ends in the route already: it is the batch URL.
  return path.endsWith('/v1/batch') ? `${url.origin}${path}` : `${url.origin}${path}/v1/batch`;
}

/**
 * @param of the call the options are for (`close()`), named in the message; the constructor's are not.
 * @throws {ConfigError} naming the first key that is no option, and the option it likely meant.
 */
export function refuseUnknown(input: object, names: readonly string[] = OPTION_NAMES, of?: string): void {
  const unknown = Object.keys(input).find((key) => !names.includes(key));
  if (unknown === undefined) return;
  const meant = (names === OPTION_NAMES ? OTHER_CLIENTS_NAMES.get(unknown) : undefined) ?? closest(unknown, names);
  const hint = names.length === 0 ? ': it takes none' : meant === undefined ? '' : `: did you mean \`${meant}\`?`;
  throw new ConfigError(unknown, `Unknown option \`${unknown}\`${of === undefined ? '' : ` of ${of}`}${hint}`);
}

function alias<K extends keyof Options>(input: Options, name: K, other: keyof Options): Options[K] {
  if (input[name] !== undefined && input[other] !== undefined && input[name] !== input[other]) {
    throw new ConfigError(name, `Expected only one of \`${name}\` and its alias \`${other}\`, got both`);
  }
  return (input[name] ?? input[other]) as Options[K];
}

/**
 * The `context` and `integrations` options, checked by the calls' own validators: every call would
 * fail on a default they refuse. Their error becomes a `ConfigError` naming the same entry.
 */
function defaultsForCalls(context: unknown, integrations: unknown): { context: Record<string, unknown>; integrations: Integrations } {
  try {
    return checkDefaults(context, integrations);
  } catch (error) {
    if (error instanceof ValidationError) throw new ConfigError(error.field, error.message);
    throw error;
  }
}

function hooks(value: unknown): readonly BeforeSend[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  list.forEach((hook, index) => {
    const name = Array.isArray(value) ? `beforeSend[${index}]` : 'beforeSend';
    if (typeof hook !== 'function') {
      throw new ConfigError(name, `Expected \`${name}\` to be a function, got ${describe(hook)}`);
    }
  });
  return Object.freeze([...list]) as readonly BeforeSend[];
}

function optionalPath(name: string, value: unknown): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
    throw new ConfigError(name, `Expected \`${name}\` to be a non-empty file path, got ${describe(value)}`);
  }
  return value;
}

