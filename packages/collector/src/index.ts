export { COLLECTOR_DEFAULTS, type CollectorOptions, type RunningCollector, startCollector } from './app/collector.js';
export {
  type CollectorConfig,
  CONFIG_DEFAULTS,
  type DeliveryOptions,
  loadConfig,
  parseConfig,
  QUEUE_DEFAULTS,
  type QueueOptions,
  SERVER_DEFAULTS,
  type ServerOptions,
  type SourceConfig,
} from './config/config.js';
export type { CollectorLogger, ReportFields } from './config/report.js';
export type { Arrival, AudiencePlan, AudienceRecord, Claimed, ClaimOptions, Delivery, Ingested, Outcome, Store, StoreDatabase, StoreSnapshot } from './delivery/store.js';
export { DataDirLockedError, JournalVersionError, SchemaVersionError, StoreClosedError, StoreConnectError } from './delivery/errors.js';
export { StoreUnavailableError } from './delivery/store.js';
export { JournalStore, type JournalOptions } from './delivery/journal/store.js';
export { PostgresStore } from './delivery/postgres/store.js';
