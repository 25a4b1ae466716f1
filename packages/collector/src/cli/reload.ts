import { ConfigError } from 'batched-analytics/internal';
import { loadConfig } from '../config/config.js';
import type { RunningCollector } from '../app/collector.js';
import type { Logger } from '../observe/log.js';

/**
 * Reads the config file again on SIGHUP and applies it to the running collector; one reload at a
 * time, in the order the signals came. A file that cannot be read or is invalid is refused with a
 * line naming the entry, and the running config stays.
 */
export class Reloader {
  readonly #file: string;
  readonly #collector: RunningCollector;
  readonly #logger: Logger;
  #reloading: Promise<void> = Promise.resolve();
  /** What `process.on('SIGHUP')` calls. */
  readonly listener = (): void => {
    this.#reloading = this.#reloading.then(() => this.#reload());
  };

  constructor(file: string, collector: RunningCollector, logger: Logger) {
    this.#file = file;
    this.#collector = collector;
    this.#logger = logger;
  }

  /** Resolves once the reloads asked for so far are done. */
  settled(): Promise<void> {
    return this.#reloading;
  }

  /**
   * Never rejects: a reload that fails leaves the running config. Its lines go straight to the
   * log, not through a reporter's rate limit: each answers a signal the operator sent.
   */
  async #reload(): Promise<void> {
    try {
      const config = await loadConfig(this.#file);
      const { restart } = this.#collector.reload(config);
      this.#logger.info(`collector: config reloaded from ${this.#file}`, { sources: config.sources.map(({ name }) => name), restart });
      if (restart.length > 0) this.#logger.warn({}, `collector: ${restart.join(', ')} changed in ${this.#file}; the running values stay until a restart`);
    } catch (error) {
      if (!(error instanceof ConfigError)) {
        this.#logger.error({}, `collector: config reload from ${this.#file} failed, the running config stays: ${String(error)}`);
        return;
      }
      // Shown as at start: no validation message quotes an entry that may hold a secret.
      this.#logger.error({ entry: error.option }, `collector: config reload refused, the running config stays: ${error.message}`);
    }
  }
}
