/**
 * The error hierarchy. Every error the library creates is an `AnalyticsError`, has a `name`
 * equal to its class name and a stable `code`, so both `instanceof` and `err.code` checks work.
 *
 * `instanceof` holds across copies of the classes too: the ESM and CJS builds each have their own,
 * and an app may hold two installs of the package. Each error carries the names of its classes
 * under a registry symbol, and `instanceof` asks for those instead of the prototype chain.
 */

/** Where an error keeps the names of its classes, from its own up to `AnalyticsError`. */
const CLASSES = Symbol.for('batched-analytics.error-classes');

/** Each class's names, made once: a delivery refused while its URL backs off makes two errors. */
const classNames = new WeakMap<object, readonly string[]>();

function classesOf(type: object): readonly string[] {
  let names = classNames.get(type);
  if (names === undefined) {
    const found: string[] = [];
    for (let at: unknown = type; at !== Error && typeof at === 'function'; at = Object.getPrototypeOf(at)) found.push((at as { name: string }).name);
    names = Object.freeze(found);
    classNames.set(type, names);
  }
  return names;
}

/** Root of every error the library creates. */
export class AnalyticsError extends Error {
  /** Stable, machine-readable identifier, e.g. `ERR_VALIDATION`. */
  readonly code: string;

  /** `value instanceof X` for `X` this class or any subclass: true when `value` was made as an `X` by any copy. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    const classes = typeof value === 'object' && value !== null ? (value as { [CLASSES]?: unknown })[CLASSES] : undefined;
    if (Array.isArray(classes)) return classes.includes(this.name);
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }

  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? 'ERR_ANALYTICS';
    Object.defineProperty(this, CLASSES, { value: classesOf(new.target) });
  }
}

/** What went wrong, in one line: an error's message, or anything else thrown as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A constructor option is invalid. Thrown by constructors, before any I/O. */
export class ConfigError extends AnalyticsError {
  /** The option at fault, e.g. `flushAt` or `webhooks[2].url`. */
  readonly option: string;

  constructor(option: string, message: string, code = 'ERR_CONFIG') {
    super(message, { code });
    this.option = option;
  }
}

/** A call's message is invalid. Thrown at the call; nothing is queued. */
export class ValidationError extends AnalyticsError {
  /** The field at fault, e.g. `userId` or `properties`. */
  readonly field: string;

  constructor(field: string, message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, { code: options.code ?? 'ERR_VALIDATION', cause: options.cause });
    this.field = field;
  }
}

/** A message serialises to more than the per-message limit (32,000 bytes of UTF-8 JSON). */
export class MessageTooLargeError extends ValidationError {
  /** Serialised size of the message in bytes. */
  readonly size: number;
  /** The limit it exceeded, in bytes. */
  readonly limit: number;

  constructor(size: number, limit: number) {
    super('message', `Expected the message to serialise to at most ${limit} bytes, got ${size} bytes`, {
      code: 'ERR_MESSAGE_TOO_LARGE',
    });
    this.size = size;
    this.limit = limit;
  }
}

/** A message could not be delivered. Reported through callbacks, events and summaries; never thrown at a call. */
export class DeliveryError extends AnalyticsError {
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, { code: options.code ?? 'ERR_DELIVERY', cause: options.cause });
  }

  /** Whether sending the same request again may succeed. */
  get retryable(): boolean {
    return false;
  }
}

/** The endpoint answered with a status that is not 2xx. */
export class HttpError extends DeliveryError {
  /** The HTTP status code. */
  readonly status: number;
  /** Delay the server asked for with `Retry-After`, in ms; absent when it sent none. */
  readonly retryAfter: number | undefined;
  /** The response body's `message` or `error` field, or its start as text; may be empty. */
  readonly body: string;

  constructor(status: number, body: string, retryAfter?: number) {
    super(`Request failed with status ${status}${body ? `: ${body}` : ''}`, { code: 'ERR_HTTP' });
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }

  /** 5xx, 429 and 408 are transient; other statuses mean the request itself is refused. */
  override get retryable(): boolean {
    return this.status >= 500 || this.status === 429 || this.status === 408;
  }
}

/** The request did not complete: connection refused or reset, DNS failure, TLS failure. */
export class NetworkError extends DeliveryError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'ERR_NETWORK', cause });
  }

  /** Certificate failures never heal by retrying; other network failures may. */
  override get retryable(): boolean {
    return !isCertificateError(this.cause);
  }
}

/** No response within the per-request timeout. */
export class TimeoutError extends DeliveryError {
  /** The timeout that expired, in ms. */
  readonly timeout: number;

  constructor(timeout: number) {
    super(`Request timed out after ${timeout} ms`, { code: 'ERR_TIMEOUT' });
    this.timeout = timeout;
  }

  override get retryable(): boolean {
    return true;
  }
}

/** `close()` reached its deadline before the message could be delivered. */
export class CloseTimeoutError extends DeliveryError {
  constructor(timeout: number) {
    super(`Not delivered: close() deadline of ${timeout} ms passed`, { code: 'ERR_CLOSE_TIMEOUT' });
  }
}

/**
 * The service kept asking the client to wait (a 429 or 503 with `Retry-After`) for longer than
 * `maxRateLimitDuration`, counted from its first such answer since the last success.
 */
export class RateLimitError extends DeliveryError {
  /** The status of the service's last answer: 429 or 503. */
  readonly status: number;
  /** The `maxRateLimitDuration` exceeded, in ms. */
  readonly maxRateLimitDuration: number;

  constructor(status: number, maxRateLimitDuration: number) {
    super(`Rate limited (status ${status}) for longer than maxRateLimitDuration (${maxRateLimitDuration} ms)`, {
      code: 'ERR_RATE_LIMITED',
    });
    this.status = status;
    this.maxRateLimitDuration = maxRateLimitDuration;
  }
}

/** A call was refused because `maxQueueSize` messages were already held. */
export class QueueFullError extends AnalyticsError {
  constructor(maxQueueSize: number) {
    super(`Dropped: the queue already holds maxQueueSize (${maxQueueSize}) messages`, { code: 'ERR_QUEUE_FULL' });
  }
}

/** A call was refused because the `spool` directory already held `maxSpoolBytes` of unsettled messages. */
export class SpoolFullError extends AnalyticsError {
  constructor(maxSpoolBytes: number) {
    super(`Dropped: the spool already holds maxSpoolBytes (${maxSpoolBytes}) of messages`, { code: 'ERR_SPOOL_FULL' });
  }
}

/** Another live process (or client) holds the `spool` directory. Thrown by the constructor. */
export class SpoolLockedError extends ConfigError {
  /** The spool directory. */
  readonly dir: string;
  /** The process that holds it. */
  readonly pid: number;

  constructor(dir: string, pid: number) {
    super('spool', `Expected \`spool\` to be a directory no other client uses, got ${dir}, locked by process ${pid}`, 'ERR_SPOOL_LOCKED');
    this.dir = dir;
    this.pid = pid;
  }
}

/**
 * The `spool` directory could not be read or written (a full or read-only disk); `cause` is the
 * file system's error. Reported once: from then on the client holds its calls in memory only.
 */
export class SpoolError extends AnalyticsError {
  /** The spool directory. */
  readonly dir: string;

  constructor(dir: string, cause: unknown) {
    super(`The spool ${dir} cannot be written (${messageOf(cause)}): calls are kept in memory only from now on`, { code: 'ERR_SPOOL', cause });
    this.dir = dir;
  }
}

/** A call was made after `close()`, or `close()` ended work that was still pending. */
export class ClosedError extends AnalyticsError {
  constructor(message = 'Dropped: the client is closed') {
    super(message, { code: 'ERR_CLOSED' });
  }
}

/** A `beforeSend` hook returned `null`: the message was dropped on purpose. */
export class FilteredError extends AnalyticsError {
  constructor(hook: number) {
    super(`Dropped: beforeSend hook ${hook} returned null`, { code: 'ERR_FILTERED' });
  }
}

/** A `beforeSend` hook threw or returned an invalid message; `cause` says what went wrong. */
export class BeforeSendError extends AnalyticsError {
  constructor(message: string, cause: unknown) {
    super(message, { code: 'ERR_BEFORE_SEND', cause });
  }
}

/** Undelivered messages could not be appended to the `deadLetter` file; `cause` is the file system's error. */
export class DeadLetterError extends AnalyticsError {
  /** The dead-letter file. */
  readonly path: string;
  /** Messages that were to be written and may be missing from the file. */
  readonly count: number;

  constructor(path: string, count: number, cause: unknown) {
    super(`Could not write ${count} undelivered message(s) to ${path}: ${(cause as Error)?.message ?? String(cause)}`, {
      code: 'ERR_DEAD_LETTER',
      cause,
    });
    this.path = path;
    this.count = count;
  }
}

const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function isCertificateError(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (CERTIFICATE_CODES.has((e as NodeJS.ErrnoException).code ?? '')) return true;
  }
  return false;
}
