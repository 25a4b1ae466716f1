export { Analytics } from './analytics.js';
export type { CloseOptions } from './analytics.js';
export type {
  AnalyticsEvents,
  Callback,
  DropEvent,
  FailedEvent,
  FlushEvent,
  RequestEvent,
  ResponseEvent,
  RetryEvent,
  Summary,
} from './events.js';
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
  TimeoutError,
  ValidationError,
} from './errors.js';
export { isDestinationEnabled } from './integrations.js';
export type { Integrations } from './integrations.js';
export { MESSAGE_TYPES, validateMessage } from './message.js';
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
} from './message.js';
export { DEFAULTS, LIMITS } from './options.js';
export type { BeforeSend, FetchLike, Options } from './options.js';
export type { Logger } from './logger.js';
export { VERSION } from './version.js';
