import { AnalyticsError } from 'batched-analytics/internal';

// The store's failures, a class each, so that callers tell them apart by type, never by code.

/**
 * The store's database could not be reached or read when it was opened: it may not be up yet, so
 * the collector tries again within `postgres.startTimeout`.
 */
export class StoreConnectError extends AnalyticsError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { code: 'ERR_STORE_CONNECT', cause: options.cause });
  }
}

/** A call on a store after `close()`: the same class whichever store it is. */
export class StoreClosedError extends AnalyticsError {
  constructor() {
    super('The store is closed', { code: 'ERR_STORE_CLOSED' });
  }
}

/** Another process holds the data dir: one journal, one process. */
export class DataDirLockedError extends AnalyticsError {
  constructor(message: string) {
    super(message, { code: 'ERR_DATA_DIR_LOCKED' });
  }
}

/** The journal's files were written by a newer collector, in a version this one cannot read. */
export class JournalVersionError extends AnalyticsError {
  constructor(message: string) {
    super(message, { code: 'ERR_JOURNAL_VERSION' });
  }
}

/** The database's schema was migrated by a newer collector, to a version this one does not know. */
export class SchemaVersionError extends AnalyticsError {
  constructor(message: string) {
    super(message, { code: 'ERR_SCHEMA_VERSION' });
  }
}
