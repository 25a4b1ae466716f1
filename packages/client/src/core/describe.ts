/** Renders a bad value for an error message: `` `0` (number) ``, `an array`, `null`. */
export function describe(value: unknown): string {
  if (value === null) return '`null`';
  if (value === undefined) return '`undefined`';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an instance of ${value.constructor?.name ?? 'Object'}`;
  if (typeof value === 'string') return `\`${JSON.stringify(value)}\` (string)`;
  return `\`${String(value)}\` (${typeof value})`;
}

/**
 * Renders a bad value that may hold a secret (a token, a write key, a header's value) for an error
 * message, which ends up in terminals and logs: a string by its length only.
 */
export function describeSecret(value: unknown): string {
  if (typeof value !== 'string') return describe(value);
  return `a string of ${value.length} character${value.length === 1 ? '' : 's'} (not shown: it may hold a secret)`;
}

/**
 * Renders a bad URL for an error message without what may hold a secret: a password shows as
 * `***` and a query as `?…`; a string that does not parse as a URL is shown only when it has no
 * `@`, `?` or `#` (a typo such as `api.example.com` is worth seeing).
 */
export function describeUrl(value: unknown): string {
  if (typeof value !== 'string') return describe(value);
  const url = URL.parse(value);
  if (url === null) return /[@?#]/.test(value) ? describeSecret(value) : describe(value);
  if (url.password === '' && url.search === '' && url.hash === '') return describe(value);
  if (url.password !== '') url.password = '***';
  const query = url.search === '' ? '' : '?…';
  url.search = '';
  url.hash = '';
  return describe(`${url.href}${query}`);
}
