// `batched-analytics/webhooks/verify`: signature checks for receivers on runtimes without Node's
// built-ins. Nothing here imports `node:*`, undici or debug, so edge bundlers take it as it is.
export { SIGNATURE_HEADER } from './signature-format.js';
export { verifySignatureAsync } from './signature-web.js';
