import { describe, displayUrl } from 'batched-analytics/internal';
import type { SourceConfig } from '../config/config.js';
import { invalid, RequestError } from './http.js';

/** What `POST /v1/deliveries/recover` asks for, checked against the running config. */
export interface RecoverRequest {
  source: SourceConfig;
  /** The position in the source's `webhooks` of the one URL to send to; absent: each it failed for. */
  target?: number;
  /** ms since the epoch. */
  since: number;
  until: number;
}

/**
 * Reads a recovery's body: `source` (a source's name), optional `url` (one of its webhook URLs, as
 * written in the config or as the page and the lookup show it), `since` and optional `until` (ISO
 * 8601 or ms since the epoch; `until` defaults to now, and must come after `since`).
 * @throws {RequestError} 400 naming the field at fault, 404 for a source that is not configured.
 */
export function parseRecover(body: Record<string, unknown>, sources: ReadonlyMap<string, SourceConfig>, now = Date.now()): RecoverRequest {
  const { source: name, url, since, until } = body;
  if (typeof name !== 'string' || name.length === 0) throw invalid('source', `Expected \`source\` to be a source's name, got ${describe(name)}`);
  const source = sources.get(name);
  if (source === undefined) throw new RequestError(404, 'ERR_NOT_FOUND', `No source is named ${JSON.stringify(name)}`);
  const request: RecoverRequest = { source, since: instant('since', since), until: until === undefined ? now : instant('until', until) };
  if (request.until <= request.since) throw invalid('until', `Expected \`until\` to come after \`since\`, got ${describe(until ?? new Date(now).toISOString())}`);
  if (url !== undefined) {
    const urls = source.webhooks?.webhooks.map((webhook) => webhook.url) ?? [];
    const target = urls.findIndex((written) => written === url || displayUrl(written) === url);
    if (typeof url !== 'string' || target === -1) throw invalid('url', `Expected \`url\` to be one of the webhook URLs of ${name}, got ${describe(url)}`);
    request.target = target;
  }
  return request;
}

/** A time as ISO 8601 or ms since the epoch. */
function instant(field: string, value: unknown): number {
  const at = typeof value === 'string' ? Date.parse(value) : typeof value === 'number' && Number.isInteger(value) ? value : Number.NaN;
  if (!Number.isFinite(at) || at < 0) throw invalid(field, `Expected \`${field}\` to be an ISO 8601 time or ms since the epoch, got ${describe(value)}`);
  return at;
}
