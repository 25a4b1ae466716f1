import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { SourceConfig } from '../config/config.js';

/**
 * Finds the source whose write key the request sends as its basic-auth user (the password is
 * ignored, as the client sends none).
 * @returns the source, or undefined when the header is missing, malformed or names no source.
 */
export function sourceOf(headers: IncomingHttpHeaders, sources: ReadonlyMap<string, SourceConfig>): SourceConfig | undefined {
  const match = /^basic\s+([a-z0-9+/=._-]+)\s*$/i.exec(headers.authorization ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return sources.get(colon === -1 ? decoded : decoded.slice(0, colon));
}

/**
 * Whether the request carries `Authorization: Bearer <token>`. Compares in constant time; always
 * false when no token is configured.
 */
export function hasBearer(headers: IncomingHttpHeaders, token: string | undefined): boolean {
  const match = /^bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  if (token === undefined || !match) return false;
  const given = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
