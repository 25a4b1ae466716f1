import { formatLine } from '../platform/format.js';
import { log } from '../platform/log.js';

/**
 * Where the client's log lines go besides `DEBUG=analytics`: `console`, a pino or winston logger,
 * or any object with these four methods. Each gets one formatted string.
 */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /**
   * pino's and winston's level check: when present, lines of a level it turns off are not even
   * formatted (the `debug` line of every call would otherwise cost a format for nothing).
   */
  isLevelEnabled?(level: string): boolean;
}

/** The methods a {@link Logger} must have. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** Clients created so far in this process: numbers them in their labels. */
let clients = 0;

/**
 * A short label telling one client's lines from another's: the write key's first four characters
 * (not enough to use it) and the client's number in this process, e.g. `wk_w#2`.
 */
export function clientLabel(writeKey: string): string {
  clients += 1;
  return `${writeKey.slice(0, 4)}#${clients}`;
}

/**
 * One client's log: every line goes to `DEBUG=analytics` and to the user's logger, both prefixed
 * with the client's label. A logger that throws is ignored: logging never breaks delivery.
 */
export class ClientLog {
  readonly #label: string;
  readonly #prefix: string;
  readonly #logger: Logger | undefined;

  constructor(label: string, logger: Logger | undefined) {
    this.#label = label;
    this.#prefix = `[${label}] `;
    this.#logger = logger;
  }

  /** Whether a `debug` line would go anywhere: callers skip building costly arguments when not. */
  get debugEnabled(): boolean {
    return log.enabled || this.#wants('debug');
  }

  debug(template: string, ...args: unknown[]): void {
    this.#write('debug', template, args);
  }

  info(template: string, ...args: unknown[]): void {
    this.#write('info', template, args);
  }

  warn(template: string, ...args: unknown[]): void {
    this.#write('warn', template, args);
  }

  error(template: string, ...args: unknown[]): void {
    this.#write('error', template, args);
  }

  #write(level: LogLevel, template: string, args: unknown[]): void {
    if (log.enabled) log(`[%s] ${template}`, this.#label, ...args);
    if (!this.#wants(level)) return;
    try {
      this.#logger![level](this.#prefix + formatLine(template, ...args));
    } catch {
      // A broken logger must not turn a log line into a failure of the host.
    }
  }

  #wants(level: LogLevel): boolean {
    if (this.#logger === undefined) return false;
    try {
      return this.#logger.isLevelEnabled?.(level) ?? true;
    } catch {
      return true;
    }
  }
}
