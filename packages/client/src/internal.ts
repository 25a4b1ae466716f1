/**
 * What `batched-analytics-collector` builds on: the client's validation, message, webhook and CLI
 * internals. Not a public API: no semver promise, and the collector pins this package's exact
 * version. Applications import `batched-analytics` and `batched-analytics/webhooks`.
 */
export { integerFlag, parseFlags } from './cli/args.js';
export { type Command, type CommandContext, EXIT, UsageError } from './cli/command.js';
export { runCommand, runMain } from './cli/run.js';
export { closest } from './core/closest.js';
export { describe, describeSecret, describeUrl } from './core/describe.js';
export { AnalyticsError, ConfigError, HttpError, messageOf, ValidationError } from './core/errors.js';
export { Emitter } from './core/emitter.js';
export { GroupCommit, type GroupCommitOptions } from './core/group-commit.js';
export { InProgress } from './core/in-progress.js';
export { isDestinationEnabled } from './core/integrations.js';
export { LIMITS } from './core/limits.js';
export { OldestFirst } from './core/oldest-first.js';
export { Queue } from './core/queue.js';
export { Throttle } from './core/throttle.js';
export { DATE_STRING, isoOf, isoTime, type JsonObject, MAX_TIME, type Message, type MessageType, MESSAGE_TYPES, validateMessage } from './core/message.js';
export { integer, isPlainObject, parseHttpUrl } from './core/validate.js';
export { liveOwner, ownerText } from './platform/lock-owner.js';
export { log } from './platform/log.js';
export { type AudienceState, audienceSync, audienceTrait, memberSet, traitNamed } from './webhooks/audience.js';
export type { WebhookInput, WebhookType } from './webhooks/body.js';
export { WebhookDestination } from './webhooks/destination.js';
export { WebhookError } from './webhooks/error.js';
export { describeFilter, filterTakes, type WebhookFilter } from './webhooks/filter.js';
export { type PreparedWebhook, prepareWebhook } from './webhooks/prepared.js';
export { displayUrl, resolveWebhookConfig, USER_AGENT, WEBHOOK_DEFAULTS, type WebhookDestinationOptions, type WebhookSettings } from './webhooks/settings.js';
export { SIGNATURE_HEADER, signBody } from './webhooks/signature.js';
export { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './webhooks/standard-format.js';
