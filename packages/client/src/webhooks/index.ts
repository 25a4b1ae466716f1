export { audienceSync, audienceTrait } from './audience.js';
export type { AudienceState, AudienceSyncResult } from './audience.js';
export { toWebhookBody } from './body.js';
export type {
  AliasBody,
  DeleteBody,
  DeleteNotification,
  GroupBody,
  IdentifyBody,
  PageBody,
  ScreenBody,
  TrackBody,
  WebhookBody,
  WebhookBodyOptions,
  WebhookInput,
  WebhookType,
} from './body.js';
export { WebhookDestination } from './destination.js';
export type {
  DeliverOptions,
  WebhookAttemptEvent,
  WebhookDeliveredEvent,
  WebhookDeliveryResult,
  WebhookEvents,
  WebhookFailedEvent,
  WebhookRecoveredEvent,
  WebhookRetryEvent,
} from './destination.js';
export { BackingOffError, RedirectError, WebhookError } from './error.js';
export { prepareWebhook } from './prepared.js';
export type { WebhookFilter } from './filter.js';
export type { PreparedWebhook } from './prepared.js';
export type { WebhookFailure } from './error.js';
export { MAX_WEBHOOKS, USER_AGENT, WEBHOOK_DEFAULTS } from './settings.js';
export type { Webhook, WebhookDestinationOptions, WebhookSettings } from './settings.js';
export { SIGNATURE_HEADER, signBody, verifySignature } from './signature.js';
export { signBodyAsync, verifySignatureAsync } from './signature-async.js';
export { verifyStandardWebhook, STANDARD_WEBHOOK_VERIFY_DEFAULTS } from './standard-webhooks.js';
export type { ReceivedHeaders, StandardWebhookVerifyOptions } from './standard-webhooks.js';
export { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './standard-format.js';
export {
  AnalyticsError,
  ClosedError,
  ConfigError,
  DeliveryError,
  HttpError,
  NetworkError,
  TimeoutError,
  ValidationError,
} from '../core/errors.js';
export type { JsonObject, Message } from '../core/message.js';
