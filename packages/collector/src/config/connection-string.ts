import { ConfigError, describeUrl } from 'batched-analytics/internal';

const PROTOCOLS = ['postgres:', 'postgresql:'];

/**
 * Checks that a store option is a PostgreSQL connection URL (`postgres://USER@HOST:PORT/DB` or
 * `postgresql://…`, with any query parameters node-postgres reads) and returns it unchanged.
 * @param option the option's name as the user wrote it (`store`, `--store`, `connectionString`).
 * @throws {ConfigError} naming `option`; a URL's password shows as `***` in the message.
 */
export function postgresUrl(option: string, value: unknown): string {
  if (typeof value === 'string' && PROTOCOLS.includes(URL.parse(value)?.protocol ?? '')) return value;
  throw new ConfigError(option, `Expected \`${option}\` to be a PostgreSQL URL like postgres://USER@HOST:PORT/DB, got ${describeUrl(value)}`);
}

/** The connection string with its password, if any, replaced by `***`, for logs and messages. */
export function redact(connectionString: string): string {
  const url = URL.parse(connectionString);
  if (url === null) return connectionString;
  // node-postgres also takes the password as a query parameter.
  if (url.password !== '') url.password = '***';
  if (url.searchParams.has('password')) url.searchParams.set('password', '***');
  return url.href;
}
