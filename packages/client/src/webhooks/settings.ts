import type { Dispatcher } from 'undici';
import { ConfigError } from '../core/errors.js';
import { describe, describeSecret, describeUrl } from '../core/describe.js';
import { type FetchLike, optionalDispatcher } from '../http/connection.js';
import { boolean, duration, integer, isPlainObject, optionalFunction, parseHttpUrl, within } from '../core/validate.js';
import { resolveFilter, type WebhookFilter } from './filter.js';
import { resolveSharedSecrets, resolveStandardSecrets, type StandardWebhooksSettings } from './secrets.js';
import { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './standard-format.js';

/** One receiver: where to POST, and the static headers only that URL gets. */
export interface Webhook {
  /** Absolute http or https URL. */
  url: string;
  /** Static `name: value` headers, e.g. an `Authorization` the receiver expects. */
  headers?: Record<string, string>;
  /**
   * Most requests per second to this URL, retries included, spaced evenly (one every
   * `1 / rateLimit` s, no burst); requests beyond wait their turn, none is dropped. Counted by each
   * destination, so by each collector process when several share a store.
   * @default undefined (no limit but `maxRequestsPerUrl` in progress)
   */
  rateLimit?: number;
  /**
   * Which messages this URL gets, by type and track event; the others are not sent to it (nor
   * retried there). A message no URL of the destination takes is sent nowhere.
   * @default undefined (every message)
   */
  filter?: WebhookFilter;
}

/** The destination's settings. */
export interface WebhookSettings {
  /** 1 to 5 receivers; each message is POSTed to every one of them whose `filter` takes it. */
  webhooks: Webhook[];
  /**
   * When set, every request carries `X-Signature`, the HMAC-SHA1 of its body under this secret; a
   * list of 1 to 3 (while rotating: the new one, then the previous) signs with the first.
   */
  sharedSecret?: string | string[];
  /**
   * When set, every request also carries the Standard Webhooks headers `webhook-id`,
   * `webhook-timestamp` and `webhook-signature` (one signature per secret).
   */
  standardWebhooks?: StandardWebhooksSettings;
}

/**
 * How the destination sends. Every duration is in milliseconds; `timeout`, `minRetryDelay` and
 * `maxRetryDelay` at most 2147483647 (about 24.8 days): a timer fires a longer wait after 1 ms.
 * `retryWindow` is no timer's and may be longer.
 */
export interface WebhookDestinationOptions {
  /**
   * How long a receiver may take to answer one request before the attempt counts as a timeout. A
   * status that arrived in time counts even when its body is still arriving: the timeout then only
   * stops the reading.
   * @default 5000
   */
  timeout?: number;
  /**
   * How long after a message was received (its `receivedAt`: by default when `deliver()` was
   * called) it may still be retried; `0` never retries.
   * @default 14400000 (4 hours)
   */
  retryWindow?: number;
  /**
   * Delay before the first retry; it doubles on each retry (with jitter) up to `maxRetryDelay`.
   * @default 1000
   */
  minRetryDelay?: number;
  /**
   * Longest delay between two attempts; also caps a receiver's `Retry-After`.
   * @default 300000 (5 minutes)
   */
  maxRetryDelay?: number;
  /**
   * Requests in progress to one URL at once. A delivery that finds a URL full goes to the other
   * URLs, or waits for the first free slot; a slow URL never holds back the others.
   * @default 64
   */
  maxRequestsPerUrl?: number;
  /**
   * Failures (timeouts, network errors, 3xx, 5xx, 408, 429) of this many different messages in a row
   * after which a URL backs off on its own: it gets no request for `minRetryDelay`, then one probe;
   * each failed probe doubles the wait, up to 5 s (or `minRetryDelay` when longer, `maxRetryDelay`
   * when shorter); any answer other than a failure ends the backoff. One message retried many
   * times counts once.
   * @default 5
   */
  breakerThreshold?: number;
  /**
   * An undici `Dispatcher` to send with (a proxy agent, say), with its `request` and `dispatch`
   * methods. The destination does not close it, and
   * cannot check it: it must keep verifying TLS certificates.
   * @default a keep-alive `Agent` that verifies certificates, owned and closed by the destination
   */
  dispatcher?: Dispatcher;
  /**
   * Send through the proxies the environment names: `HTTPS_PROXY` for https receivers, `HTTP_PROXY`
   * for http ones, none for hosts `NO_PROXY` lists (lower-case forms too). `false` ignores them.
   * A `dispatcher` wins over both.
   * @default true
   */
  proxy?: boolean;
  /**
   * Send with this fetch-compatible function instead of undici's `request` (instrumentation, msw).
   * @default undefined (undici `request`)
   */
  fetch?: FetchLike;
}

/** One receiver after validation: its URL and the headers of every request to it but the signature. */
export interface ResolvedWebhook {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly rateLimit: number | undefined;
  readonly filter: Readonly<WebhookFilter> | undefined;
}

/** Settings and options after validation and defaults. */
export interface ResolvedWebhookConfig {
  readonly webhooks: readonly ResolvedWebhook[];
  /** The `X-Signature` secrets, the signing one first; empty when none. */
  readonly sharedSecrets: readonly string[];
  /** The Standard Webhooks secrets; empty when off. */
  readonly standardSecrets: readonly string[];
  readonly timeout: number;
  readonly retryWindow: number;
  readonly minRetryDelay: number;
  readonly maxRetryDelay: number;
  readonly maxRequestsPerUrl: number;
  readonly breakerThreshold: number;
  readonly dispatcher: Dispatcher | undefined;
  readonly proxy: boolean;
  readonly fetch: FetchLike | undefined;
}

/** Defaults of {@link WebhookDestinationOptions}, declared once. */
export const WEBHOOK_DEFAULTS = {
  timeout: 5_000,
  retryWindow: 4 * 60 * 60 * 1000,
  minRetryDelay: 1_000,
  maxRetryDelay: 5 * 60 * 1000,
  maxRequestsPerUrl: 64,
  breakerThreshold: 5,
  proxy: true,
} as const;

/** Most receivers one destination may have. */
export const MAX_WEBHOOKS = 5;

/** The `User-Agent` of every request: a product token ending in `/1.0`. */
export const USER_AGENT = 'batched-analytics-webhooks/1.0';

/**
 * Headers the destination sets itself, or that describe the connection rather than the request;
 * a static header of one of these names would contradict what is sent.
 */
const MANAGED_HEADERS = new Set([
  'content-type',
  'content-length',
  'user-agent',
  'x-signature',
  WEBHOOK_ID_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'expect',
  'te',
  'trailer',
]);
/** A misspelt key is an error rather than a setting silently ignored (an unlimited `ratelimit`). */
const WEBHOOK_KEYS = ['url', 'headers', 'rateLimit', 'filter'];
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, obs-text, space and tab: no CR, LF or NUL that could split the request. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Where settings and options were written, to name their entries in errors as the user wrote them:
 * e.g. `sources[0].destinations.Webhooks` and `delivery` in the collector's config file. Without
 * them, entries are named alone (`webhooks[2].url`, `timeout`).
 */
export interface WebhookConfigPaths {
  settings?: string;
  options?: string;
}

/**
 * Validates settings and options, naming the first entry at fault.
 * @throws {ConfigError} e.g. `webhooks[2].url` when that URL is not an absolute http(s) URL.
 */
export function resolveWebhookConfig(settings: WebhookSettings, options: WebhookDestinationOptions = {}, paths: WebhookConfigPaths = {}): ResolvedWebhookConfig {
  const setting = (key: string) => within(paths.settings, key);
  const option = (key: string) => within(paths.options, key);
  if (!isPlainObject(settings)) {
    const name = paths.settings ?? 'settings';
    throw new ConfigError(name, `Expected \`${name}\` to be an object, got ${describe(settings)}`);
  }
  if (options === null || typeof options !== 'object') {
    const name = paths.options ?? 'options';
    throw new ConfigError(name, `Expected \`${name}\` to be an object, got ${describe(options)}`);
  }
  const { webhooks } = settings;
  if (!Array.isArray(webhooks) || webhooks.length < 1 || webhooks.length > MAX_WEBHOOKS) {
    const got = Array.isArray(webhooks) ? `${webhooks.length} entries` : describe(webhooks);
    throw new ConfigError(setting('webhooks'), `Expected \`${setting('webhooks')}\` to be an array of 1 to ${MAX_WEBHOOKS} entries, got ${got}`);
  }
  const minRetryDelay = duration(option('minRetryDelay'), options.minRetryDelay ?? WEBHOOK_DEFAULTS.minRetryDelay, 0);
  return Object.freeze({
    webhooks: Object.freeze(webhooks.map((webhook, index) => resolveWebhook(webhook, setting(`webhooks[${index}]`)))),
    sharedSecrets: resolveSharedSecrets(settings.sharedSecret, setting('sharedSecret')),
    standardSecrets: resolveStandardSecrets(settings.standardWebhooks, setting('standardWebhooks')),
    timeout: duration(option('timeout'), options.timeout ?? WEBHOOK_DEFAULTS.timeout, 1),
    retryWindow: integer(option('retryWindow'), options.retryWindow ?? WEBHOOK_DEFAULTS.retryWindow, 0),
    minRetryDelay,
    maxRetryDelay: duration(option('maxRetryDelay'), options.maxRetryDelay ?? WEBHOOK_DEFAULTS.maxRetryDelay, minRetryDelay),
    maxRequestsPerUrl: integer(option('maxRequestsPerUrl'), options.maxRequestsPerUrl ?? WEBHOOK_DEFAULTS.maxRequestsPerUrl, 1),
    breakerThreshold: integer(option('breakerThreshold'), options.breakerThreshold ?? WEBHOOK_DEFAULTS.breakerThreshold, 1),
    dispatcher: optionalDispatcher(option('dispatcher'), options.dispatcher),
    proxy: boolean(option('proxy'), options.proxy ?? WEBHOOK_DEFAULTS.proxy),
    fetch: optionalFunction(option('fetch'), options.fetch),
  });
}

function resolveWebhook(webhook: unknown, name: string): ResolvedWebhook {
  if (!isPlainObject(webhook)) throw new ConfigError(name, `Expected \`${name}\` to be an object with a \`url\`, got ${describe(webhook)}`);
  const unknown = Object.keys(webhook).find((key) => !WEBHOOK_KEYS.includes(key));
  if (unknown !== undefined) {
    throw new ConfigError(`${name}.${unknown}`, `Expected no \`${name}.${unknown}\`: a webhook has only ${WEBHOOK_KEYS.map((key) => `\`${key}\``).join(', ')}`);
  }
  const url = webhook.url;
  const parsed = typeof url === 'string' ? parseHttpUrl(url) : undefined;
  if (parsed === undefined) {
    throw new ConfigError(`${name}.url`, `Expected \`${name}.url\` to be an absolute http or https URL, got ${describeUrl(url)}`);
  }
  // undici would drop them silently and the receiver's basic auth would fail; refusing also keeps
  // a password out of every place a URL is shown.
  if (parsed.username !== '' || parsed.password !== '') {
    throw new ConfigError(
      `${name}.url`,
      `Expected \`${name}.url\` to have no user name or password (they would not be sent); put an \`Authorization\` header in its \`headers\` instead`,
    );
  }
  const headers = { ...resolveHeaders(webhook.headers ?? {}, `${name}.headers`), 'user-agent': USER_AGENT, 'content-type': 'application/json' };
  const rateLimit = webhook.rateLimit === undefined ? undefined : integer(`${name}.rateLimit`, webhook.rateLimit, 1);
  const filter = webhook.filter === undefined ? undefined : resolveFilter(webhook.filter, `${name}.filter`);
  return Object.freeze({ url: url as string, headers: Object.freeze(headers), rateLimit, filter });
}

function resolveHeaders(headers: unknown, name: string): Record<string, string> {
  if (!isPlainObject(headers)) throw new ConfigError(name, `Expected \`${name}\` to be a plain object, got ${describe(headers)}`);
  const resolved: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    const option = `${name}.${key}`;
    if (!HEADER_NAME.test(key)) throw new ConfigError(option, `Expected \`${option}\` to have a valid header name, got ${describe(key)}`);
    const lower = key.toLowerCase();
    if (MANAGED_HEADERS.has(lower)) {
      throw new ConfigError(option, `Expected no \`${option}\`: the destination sets that header itself or forbids it`);
    }
    if (lower in resolved) throw new ConfigError(option, `Expected \`${option}\` only once, got it twice in different case`);
    if (typeof value !== 'string' || !HEADER_VALUE.test(value)) {
      throw new ConfigError(option, `Expected \`${option}\` to be a header value without line breaks, got ${describeSecret(value)}`);
    }
    resolved[lower] = value;
  }
  return resolved;
}

/** A URL for logs and error messages: without credentials or query, where receivers put tokens. */
export function displayUrl(url: string): string {
  const { origin, pathname } = new URL(url);
  return origin + pathname;
}
