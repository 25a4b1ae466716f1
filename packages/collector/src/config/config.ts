import { readFile } from 'node:fs/promises';
import { closest, ConfigError, describe, describeSecret, describeUrl, integer, isPlainObject, parseHttpUrl, resolveWebhookConfig, type WebhookDestinationOptions, type WebhookSettings } from 'batched-analytics/internal';
import { postgresUrl } from './connection-string.js';
import { parseCidr } from './cidr.js';
import { POSTGRES_OPTIONS, type PostgresOptions } from './postgres-timeouts.js';
import { jsonSyntaxError } from './json-syntax.js';

/**
 * How the collector's Webhooks destinations send: the destination's own options, with the same
 * defaults, except that `retryWindow` counts from when the collector accepted the message (so a
 * restart does not give it a new window) rather than from its first attempt.
 */
export type DeliveryOptions = Pick<
  WebhookDestinationOptions,
  'timeout' | 'retryWindow' | 'minRetryDelay' | 'maxRetryDelay' | 'maxRequestsPerUrl' | 'breakerThreshold'
> &
  Partial<FailingOptions>;

/** When the collector gives up on a webhook URL that keeps failing (see docs/collector.md, "Failing receivers"). */
export interface FailingOptions {
  /**
   * How long every attempt at a URL must have failed, in ms, before it is disabled: no request
   * goes to it until it is enabled again, and what waits for it is kept.
   * @default 432000000 (5 days)
   */
  disableAfter: number;
  /**
   * Failed attempts in a row after which a URL sends the `endpoint.failing` alert (at most once an hour).
   * @default 10
   */
  failingAfter: number;
}

/** Defaults of {@link FailingOptions}, declared once: five days, as Svix. */
export const FAILING_DEFAULTS: Readonly<FailingOptions> = Object.freeze({ disableAfter: 5 * 24 * 60 * 60 * 1000, failingAfter: 10 });

/** The source the collector's own alerts are delivered as (to `alerts.url`): no source of the config may take its name. */
export const ALERTS_SOURCE = '@alerts';

/** Where operational webhooks (alerts about failing receivers) go, signed as Standard Webhooks. */
export interface AlertsConfig {
  url: string;
  /** A Standard Webhooks secret, `whsec_` and base64: never logged or shown. */
  secret: string;
}

/** How the collector's HTTP server treats its clients. Durations in ms. */
export interface ServerOptions {
  /**
   * How long a client may take to send a request's headers; then it gets 408 and the connection closes.
   * @default 10000
   */
  headersTimeout: number;
  /**
   * How long a client may take to send a whole request, headers and body; then 408 and close.
   * @default 30000
   */
  requestTimeout: number;
  /**
   * Connections open at once; further ones are closed as soon as they are accepted.
   * @default 1000
   */
  maxConnections: number;
  /**
   * On SIGTERM or SIGINT, how long the collector keeps taking messages after `/readyz` turned 503,
   * so that a load balancer stops sending to it before it stops listening.
   * @default 5000
   */
  drainDelay: number;
  /** How long a browser stays signed in to the live page (its session cookie's lifetime). @default 43200000 (12 h) */
  sessionLifetime: number;
  /**
   * The JavaScript heap size, in MB, that the collector keeps near between full garbage
   * collections: as what is live grows toward it, collections come sooner. Soft: what is live is
   * never refused memory. 0 leaves it to V8, which lets a process taking messages at full speed
   * grow to four times what is live. Set by `serve` for its whole process.
   * @default 192
   */
  heapTarget: number;
  /**
   * The collector's URL as browsers and apps reach it (behind a proxy, the proxy's), e.g.
   * `https://collect.example.com`: where `GET /v1/projects/<writeKey>/settings` tells analytics.js
   * to send. Absent: the request's own `Host` and scheme.
   */
  publicUrl?: string;
  /**
   * The reverse proxies (addresses or CIDRs, IPv4 and IPv6) whose `X-Forwarded-For` and
   * `X-Forwarded-Proto` are believed. Empty: the socket's address is the sender's.
   * @default []
   */
  trustProxy: string[];
}

/** The integer entries of {@link ServerOptions}. */
type ServerLimits = Omit<ServerOptions, 'publicUrl' | 'trustProxy'>;

/** Defaults of {@link ServerOptions}, declared once. */
export const SERVER_DEFAULTS: Readonly<ServerLimits & Pick<ServerOptions, 'trustProxy'>> = Object.freeze({
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  maxConnections: 1_000,
  drainDelay: 5_000,
  sessionLifetime: 12 * 60 * 60 * 1000,
  heapTarget: 192,
  trustProxy: Object.freeze([]) as unknown as string[],
});

/**
 * How a collector process takes its share of the delivery queue: it claims deliveries for `lease`
 * ms at a time, renewed while their attempts run, at most `maxInFlight` at once. Durations in ms.
 */
export interface QueueOptions {
  /**
   * How long a claim lasts unless renewed (every third of it while the attempt runs): how long the
   * deliveries of a process that died wait before another process takes them over.
   * @default 30000
   */
  lease: number;
  /**
   * How often the process looks for due work it was not told about (retries of other processes,
   * claims that lapsed), besides the wake-ups processes send each other.
   * @default 1000
   */
  pollInterval: number;
  /**
   * Deliveries one process holds at once; an acceptance beyond that leaves them for whichever
   * process has room. Due work is claimed once a quarter of it is free.
   * @default 10000
   */
  maxInFlight: number;
}

/** Defaults of {@link QueueOptions}, declared once. */
export const QUEUE_DEFAULTS: Readonly<QueueOptions> = Object.freeze({ lease: 30_000, pollInterval: 1_000, maxInFlight: 10_000 });

/** How the ingestion API de-duplicates messages. Durations in ms. */
export interface DedupeOptions {
  /**
   * How long a source remembers a `messageId` it accepted: a message with the same `messageId`
   * sent to the same source within it is answered 200 and forwarded nowhere. 0: off.
   * @default 86400000 (24 h)
   */
  window: number;
}

/** Defaults of {@link DedupeOptions}, declared once: a day, as the service's window. */
export const DEDUPE_DEFAULTS: Readonly<DedupeOptions> = Object.freeze({ window: 24 * 60 * 60 * 1000 });

/** How long the store keeps deliveries once they settled, with their attempts: to look them up and send them again. */
export interface RetentionOptions {
  /**
   * ms a settled delivery is kept (its message, body, every attempt and its outcome). 0: none is
   * kept (a settled delivery can no longer be looked up or sent again).
   * @default 86400000 (24 h)
   */
  keepFor: number;
  /**
   * Bytes of settled deliveries the file journal keeps at most (and never more than an eighth of
   * its disk, nor while less than a quarter of it is free: the journal's room comes first).
   * PostgreSQL keeps rows for `keepFor` whatever their size.
   * @default 268435456 (256 MiB)
   */
  maxBytes: number;
}

/** Defaults of {@link RetentionOptions}, declared once: a day, as the de-duplication window. */
export const RETENTION_DEFAULTS: Readonly<RetentionOptions> = Object.freeze({ keepFor: 24 * 60 * 60 * 1000, maxBytes: 256 * 1024 * 1024 });

/** One source: who may write to it, and where its messages go. */
export interface SourceConfig {
  /** Shown in the live debugger and in logs; unique. */
  name: string;
  /** The key clients send as the basic-auth user; unique. */
  writeKey: string;
  /** The source's Webhooks destination; absent when the source has none. */
  webhooks?: WebhookSettings;
  /**
   * The origins (`https://shop.example.com`) whose pages may send with this write key; a request
   * from another origin is refused. Absent: any origin, as the service allows.
   */
  allowedOrigins?: string[];
}

/** A validated collector config file. */
export interface CollectorConfig {
  /**
   * The token of the admin: reads the live page, its stream and details, sends deliveries again and
   * asks for deletions. Absent: replays and deletions are refused.
   */
  adminToken?: string;
  /** A token that reads the live page, its stream and details (and `/metrics`), nothing more. */
  readToken?: string;
  sources: SourceConfig[];
  delivery: DeliveryOptions;
  server: ServerOptions;
  queue: QueueOptions;
  dedupe: DedupeOptions;
  retention: RetentionOptions;
  /** Host names, besides the collector's own address, under which the live page answers. */
  allowedHosts: string[];
  /** Events the live page can page back through, kept in memory and in the data dir's history. */
  historyEvents: number;
  /** A PostgreSQL URL to keep deliveries and audiences in instead of the data dir's journal. */
  store?: string;
  /** How long the collector waits on PostgreSQL (with `store` or `--store`). */
  postgres: PostgresOptions;
  /** Where alerts about failing receivers go; absent: nowhere (they are still logged and counted). */
  alerts?: AlertsConfig;
}

/** Defaults of the config's top-level entries. */
export const CONFIG_DEFAULTS = { historyEvents: 10_000 } as const;

/** The one destination the local collector has, under its case-sensitive integrations name. */
export const WEBHOOKS = 'Webhooks';

const TOP_KEYS = ['adminToken', 'readToken', 'sources', 'delivery', 'server', 'queue', 'dedupe', 'retention', 'allowedHosts', 'historyEvents', 'store', 'postgres', 'alerts'];
const SOURCE_KEYS = ['name', 'writeKey', 'destinations', 'allowedOrigins'];
const DELIVERY_MINIMUMS: Record<keyof DeliveryOptions, number> = {
  timeout: 1,
  retryWindow: 0,
  minRetryDelay: 0,
  maxRetryDelay: 0,
  maxRequestsPerUrl: 1,
  breakerThreshold: 1,
  disableAfter: 1,
  failingAfter: 1,
};
/** Both timeouts are capped: a longer one lets slow clients hold connections for minutes. */
const SERVER_LIMITS: Record<keyof ServerLimits, [min: number, max: number]> = {
  headersTimeout: [1, 30_000],
  requestTimeout: [1, 30_000],
  maxConnections: [1, Number.MAX_SAFE_INTEGER],
  // Orchestrators kill a process that takes longer than about half a minute to stop.
  drainDelay: [0, 60_000],
  // A week at most: a stolen cookie is good for that long, and tokens are not revoked per browser.
  sessionLifetime: [60_000, 7 * 24 * 60 * 60 * 1000],
  // 0 is V8's own policy; a target beyond 1 TiB is no target.
  heapTarget: [0, 1_048_576],
};
/** Below 100 ms a healthy database on a network fails them; beyond a minute every client has given up long before. */
const POSTGRES_LIMITS: Record<keyof PostgresOptions, [min: number, max: number]> = {
  connectTimeout: [100, 60_000],
  // 0: no waiting, the first failure ends the start. An hour covers any deploy order.
  startTimeout: [0, 60 * 60 * 1000],
  statementTimeout: [100, 60_000],
  queryTimeout: [100, 60_000],
  idleInTransactionTimeout: [100, 60_000],
};
/** 30 days at most: the memory and disk it takes grow with the ids accepted within it. */
const DEDUPE_LIMITS: Record<keyof DedupeOptions, [min: number, max: number]> = { window: [0, 30 * 24 * 60 * 60 * 1000] };
const RETENTION_LIMITS: Record<keyof RetentionOptions, [min: number, max: number]> = { keepFor: [0, 366 * 24 * 60 * 60 * 1000], maxBytes: [0, Number.MAX_SAFE_INTEGER] };
const QUEUE_LIMITS: Record<keyof QueueOptions, [min: number, max: number]> = {
  lease: [100, 24 * 60 * 60 * 1000],
  pollInterval: [10, 60_000],
  maxInFlight: [1, 100_000],
};

/**
 * Validates a parsed config file (see the README's "Config file" section).
 * @throws {ConfigError} naming the first entry at fault, e.g. `sources[1].destinations.Webhooks.webhooks[0].url`.
 */
export function parseConfig(input: unknown): CollectorConfig {
  const top = object('config', input, TOP_KEYS);
  const config: CollectorConfig = {
    sources: [],
    delivery: parseDelivery(top.delivery),
    server: parseServer(top.server),
    queue: bounded('queue', top.queue, QUEUE_DEFAULTS, QUEUE_LIMITS),
    dedupe: bounded('dedupe', top.dedupe, DEDUPE_DEFAULTS, DEDUPE_LIMITS),
    retention: bounded('retention', top.retention, RETENTION_DEFAULTS, RETENTION_LIMITS),
    postgres: parsePostgres(top.postgres),
    allowedHosts: parseAllowedHosts(top.allowedHosts),
    // At least the 200 a page is sent when it connects.
    historyEvents: top.historyEvents === undefined ? CONFIG_DEFAULTS.historyEvents : integer('historyEvents', top.historyEvents, 200),
  };
  if (top.adminToken !== undefined) config.adminToken = parseToken('adminToken', top.adminToken);
  if (top.readToken !== undefined) config.readToken = parseToken('readToken', top.readToken);
  if (config.readToken !== undefined && config.readToken === config.adminToken) {
    throw new ConfigError('readToken', 'Expected `readToken` to differ from `adminToken`: the same token cannot both allow and refuse replays');
  }
  if (top.store !== undefined) config.store = postgresUrl('store', top.store);
  if (top.alerts !== undefined) config.alerts = parseAlerts(top.alerts, config.delivery);
  if (!Array.isArray(top.sources) || top.sources.length === 0) {
    throw new ConfigError('sources', `Expected \`sources\` to be a non-empty array, got ${describe(top.sources)}`);
  }
  const seen = { name: new Map<string, number>(), writeKey: new Map<string, number>() };
  top.sources.forEach((entry: unknown, index: number) => {
    const source = parseSource(entry, `sources[${index}]`, config.delivery);
    for (const key of ['name', 'writeKey'] as const) {
      const first = seen[key].get(source[key]);
      if (first !== undefined) {
        throw new ConfigError(`sources[${index}].${key}`, `Expected \`sources[${index}].${key}\` to be unique, got the same as \`sources[${first}].${key}\``);
      }
      seen[key].set(source[key], index);
    }
    config.sources.push(source);
  });
  return config;
}

function parseSource(input: unknown, path: string, delivery: DeliveryOptions): SourceConfig {
  const entry = object(path, input, SOURCE_KEYS);
  const source: SourceConfig = {
    name: sourceName(`${path}.name`, entry.name),
    writeKey: parseWriteKey(`${path}.writeKey`, entry.writeKey),
  };
  if (entry.allowedOrigins !== undefined) source.allowedOrigins = parseOrigins(`${path}.allowedOrigins`, entry.allowedOrigins);
  if (entry.destinations === undefined) return source;
  const destinations = object(`${path}.destinations`, entry.destinations, [WEBHOOKS]);
  if (destinations.Webhooks !== undefined) {
    const prefix = `${path}.destinations.${WEBHOOKS}`;
    const settings = object(prefix, destinations.Webhooks, ['webhooks', 'sharedSecret', 'standardWebhooks']) as unknown as WebhookSettings;
    resolveWebhookConfig(settings, delivery, { settings: prefix, options: 'delivery' });
    source.webhooks = settings;
  }
  return source;
}

function parseDelivery(input: unknown): DeliveryOptions {
  if (input === undefined) return {};
  const entry = object('delivery', input, Object.keys(DELIVERY_MINIMUMS));
  const delivery: DeliveryOptions = {};
  for (const [key, min] of Object.entries(DELIVERY_MINIMUMS) as [keyof DeliveryOptions, number][]) {
    if (entry[key] !== undefined) delivery[key] = integer(`delivery.${key}`, entry[key], min);
  }
  const { minRetryDelay = 0, maxRetryDelay } = delivery;
  if (maxRetryDelay !== undefined && maxRetryDelay < minRetryDelay) {
    throw new ConfigError('delivery.maxRetryDelay', `Expected \`delivery.maxRetryDelay\` to be >= \`delivery.minRetryDelay\` (${minRetryDelay}), got \`${maxRetryDelay}\``);
  }
  return delivery;
}

/** The alert receiver's settings as a Webhooks destination's: one URL, signed with the secret. */
export function alertSettings({ url, secret }: AlertsConfig): WebhookSettings {
  return { webhooks: [{ url }], standardWebhooks: { secrets: [secret] } };
}

function parseAlerts(input: unknown, delivery: DeliveryOptions): AlertsConfig {
  const entry = object('alerts', input, ['url', 'secret']);
  const alerts = { url: nonEmptyString('alerts.url', entry.url), secret: nonEmptyString('alerts.secret', entry.secret) };
  try {
    resolveWebhookConfig(alertSettings(alerts), delivery);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // The destination names its own entries; the config has two. Its message never quotes a secret.
    const option = error.option.startsWith('standardWebhooks') ? 'alerts.secret' : 'alerts.url';
    const detail = option === 'alerts.secret' ? 'a Standard Webhooks secret: "whsec_" followed by the base64 of 24 to 64 bytes' : 'an absolute http or https URL without credentials';
    throw new ConfigError(option, `Expected \`${option}\` to be ${detail}`);
  }
  return alerts;
}

function parseServer(input: unknown): ServerOptions {
  const { trustProxy, ...limits } = SERVER_DEFAULTS;
  const server: ServerOptions = { ...bounded('server', input, limits, SERVER_LIMITS, ['publicUrl', 'trustProxy']), trustProxy };
  if (isPlainObject(input)) {
    if (input.publicUrl !== undefined) server.publicUrl = parsePublicUrl('server.publicUrl', input.publicUrl);
    if (input.trustProxy !== undefined) server.trustProxy = parseTrustProxy('server.trustProxy', input.trustProxy);
  }
  if (server.requestTimeout < server.headersTimeout) {
    throw new ConfigError(
      'server.requestTimeout',
      `Expected \`server.requestTimeout\` to be >= \`server.headersTimeout\` (${server.headersTimeout}), got \`${server.requestTimeout}\``,
    );
  }
  return server;
}

function parsePostgres(input: unknown): PostgresOptions {
  const postgres = bounded('postgres', input, POSTGRES_OPTIONS, POSTGRES_LIMITS);
  if (postgres.queryTimeout < postgres.statementTimeout) {
    throw new ConfigError(
      'postgres.queryTimeout',
      `Expected \`postgres.queryTimeout\` to be >= \`postgres.statementTimeout\` (${postgres.statementTimeout}), got \`${postgres.queryTimeout}\``,
    );
  }
  return postgres;
}

/** An entry of integers, each within its limits, defaults filled in; `others` are its other keys, read elsewhere. */
function bounded<K extends string>(
  path: string,
  input: unknown,
  defaults: Readonly<Record<K, number>>,
  limits: Record<K, [min: number, max: number]>,
  others: readonly string[] = [],
): Record<K, number> {
  const result: Record<K, number> = { ...defaults };
  if (input === undefined) return result;
  const entry = object(path, input, [...Object.keys(limits), ...others]);
  for (const [key, [min, max]] of Object.entries(limits) as [K, [number, number]][]) {
    if (entry[key] === undefined) continue;
    const value = integer(`${path}.${key}`, entry[key], min);
    if (value > max) throw new ConfigError(`${path}.${key}`, `Expected \`${path}.${key}\` to be at most ${max}, got \`${value}\``);
    result[key] = value;
  }
  return result;
}

/** Host names without a port: letters, digits, dots, hyphens; a leading dot for a domain and its subdomains. */
const HOST_NAME = /^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;

function parseAllowedHosts(input: unknown): string[] {
  if (input === undefined) return [];
  if (!Array.isArray(input)) throw new ConfigError('allowedHosts', `Expected \`allowedHosts\` to be an array of host names, got ${describe(input)}`);
  return input.map((name: unknown, index) => {
    if (typeof name !== 'string' || !HOST_NAME.test(name)) {
      throw new ConfigError(`allowedHosts[${index}]`, `Expected \`allowedHosts[${index}]\` to be a host name without port, like "collector.internal" or ".example.com", got ${describe(name)}`);
    }
    return name;
  });
}

/**
 * An absolute http(s) URL without credentials, query or fragment, with no trailing slash: the
 * settings route appends `/v1` to it.
 */
function parsePublicUrl(path: string, value: unknown): string {
  const url = parseHttpUrl(value);
  if (url === undefined || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ConfigError(path, `Expected \`${path}\` to be an http or https URL without credentials, query or fragment, like "https://collect.example.com", got ${describeUrl(value)}`);
  }
  return url.href.replace(/\/+$/, '');
}

/** Addresses and CIDRs, each checked now: a typo would otherwise trust nobody, or everybody, silently. */
function parseTrustProxy(path: string, value: unknown): string[] {
  if (!Array.isArray(value)) throw new ConfigError(path, `Expected \`${path}\` to be an array of addresses or CIDRs, got ${describe(value)}`);
  return value.map((entry: unknown, index) => {
    if (typeof entry !== 'string' || parseCidr(entry) === undefined) {
      throw new ConfigError(`${path}[${index}]`, `Expected \`${path}[${index}]\` to be an IP address or a CIDR, like "10.0.0.1", "10.0.0.0/8" or "fd00::/8", got ${describe(entry)}`);
    }
    return entry;
  });
}

/** Origins as browsers send them in `Origin`: scheme, host and port, nothing more. */
function parseOrigins(path: string, value: unknown): string[] {
  if (!Array.isArray(value)) throw new ConfigError(path, `Expected \`${path}\` to be an array of origins, got ${describe(value)}`);
  return value.map((entry: unknown, index): string => {
    const url = parseHttpUrl(entry);
    if (url === undefined || url.origin !== entry) {
      throw new ConfigError(`${path}[${index}]`, `Expected \`${path}[${index}]\` to be an origin (scheme, host and port, no path or trailing slash), like "https://shop.example.com", got ${describe(entry)}`);
    }
    return url.origin;
  });
}

/** A plain object whose keys are all in `allowed`: a misspelt key is an error, not silently ignored. */
function object(path: string, value: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (!isPlainObject(value)) throw new ConfigError(path, `Expected \`${path}\` to be an object, got ${describe(value)}`);
  const unknown = Object.keys(value).find((key) => !allowed.includes(key));
  if (unknown !== undefined) {
    const where = path === 'config' ? 'the config' : `\`${path}\``;
    const meant = closest(unknown, allowed);
    const hint = meant === undefined ? '' : `: did you mean \`${meant}\`?`;
    throw new ConfigError(`${path}.${unknown}`, `Expected ${where} to have only ${allowed.map((k) => `\`${k}\``).join(', ')}, got \`${unknown}\`${hint}`);
  }
  return value;
}

function nonEmptyString(path: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new ConfigError(path, `Expected \`${path}\` to be a non-empty string, got ${describe(value)}`);
  }
  return value;
}

function sourceName(path: string, value: unknown): string {
  const name = nonEmptyString(path, value);
  if (name === ALERTS_SOURCE) throw new ConfigError(path, `Expected \`${path}\` to be another name: ${JSON.stringify(ALERTS_SOURCE)} is the collector's own, for its alerts`);
  return name;
}

/** Shortest `adminToken` or `readToken`: short enough to guess is no protection. */
export const MIN_TOKEN_LENGTH = 16;

/** What a bearer token can hold in an `Authorization` header: one run of visible ASCII. */
const TOKEN = /^[\x21-\x7e]+$/;

function parseToken(path: string, value: unknown): string {
  if (typeof value !== 'string' || value.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(path, `Expected \`${path}\` to be a string of at least ${MIN_TOKEN_LENGTH} characters, got ${describeSecret(value)}`);
  }
  if (!TOKEN.test(value)) {
    throw new ConfigError(path, `Expected \`${path}\` to be visible ASCII characters without spaces (a bearer token), got ${describeSecret(value)}`);
  }
  return value;
}

/** A write key a client can send: the basic-auth user ends at the first colon. */
function parseWriteKey(path: string, value: unknown): string {
  const key = nonEmptyString(path, value);
  if (key.includes(':')) {
    throw new ConfigError(path, `Expected \`${path}\` to have no \`:\` (clients send it as the basic-auth user, which ends at the first colon), got ${describeSecret(key)}`);
  }
  if (/[\x00-\x1f\x7f]/.test(key)) throw new ConfigError(path, `Expected \`${path}\` to have no control characters, got ${describeSecret(key)}`);
  return key;
}

/**
 * Reads and validates a config file.
 * @throws {ConfigError} when the file cannot be read, is not JSON, or has an invalid entry; the
 * message names the file and the entry.
 */
export async function loadConfig(file: string): Promise<CollectorConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError('config', `Cannot read config file ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text around the fault, and a config file holds secrets.
    const why = jsonSyntaxError(text);
    throw new ConfigError('config', `Config file ${file} is not valid JSON${why === undefined ? '' : `: ${why}`}`);
  }
  try {
    return parseConfig(parsed);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(error.option, `Config file ${file}: ${error.message}`);
  }
}
