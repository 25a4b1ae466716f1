// `batched-analytics/webhooks/verify`: signing and checking signatures on runtimes without Node's
// built-ins. Nothing here imports `node:*`, undici or debug, so edge bundlers take it as it is.
export { SIGNATURE_HEADER } from './signature-format.js';
export { signBodyAsync, verifySignatureAsync } from './signature-async.js';
export { verifyStandardWebhook, STANDARD_WEBHOOK_VERIFY_DEFAULTS } from './standard-webhooks.js';
export type { ReceivedHeaders, StandardWebhookVerifyOptions } from './standard-webhooks.js';
export { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './standard-format.js';
