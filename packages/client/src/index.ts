export { Analytics } from './client/analytics.js';
export type { CloseOptions } from './client/analytics.js';
export type {
  AnalyticsEvents,
  Callback,
  DropEvent,
  FailedEvent,
  FlushEvent,
  RateLimitEvent,
  RequestEvent,
  ResponseEvent,
  RetryEvent,
  Summary,
} from './client/events.js';
export {
  AnalyticsError,
  BeforeSendError,
  ClosedError,
  CloseTimeoutError,
  ConfigError,
  DeadLetterError,
  DeliveryError,
  FilteredError,
  HttpError,
  MessageTooLargeError,
  NetworkError,
  QueueFullError,
  RateLimitError,
  SpoolError,
  SpoolFullError,
  SpoolLockedError,
  TimeoutError,
  ValidationError,
} from './core/errors.js';
export { isDestinationEnabled } from './core/integrations.js';
export type { Integrations } from './core/integrations.js';
export { MESSAGE_TYPES, validateMessage } from './core/message.js';
export type {
  AliasParams,
  BaseParams,
  CommonParams,
  GroupParams,
  IdentifyParams,
  Identity,
  JsonObject,
  Message,
  MessageInput,
  MessageType,
  PageParams,
  ScreenParams,
  TrackParams,
} from './core/message.js';
export { DEFAULTS } from './client/options.js';
export { LIMITS } from './core/limits.js';
export type { BeforeSend, Options } from './client/options.js';
export type { FetchLike } from './http/connection.js';
export type { Logger } from './client/logger.js';
export { VERSION } from './core/version.js';
