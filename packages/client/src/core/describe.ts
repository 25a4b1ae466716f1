/** Renders a bad value for an error message: `` `0` (number) ``, `an array`, `null`. */
export function describe(value: unknown): string {
  if (value === null) return '`null`';
  if (value === undefined) return '`undefined`';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an instance of ${value.constructor?.name ?? 'Object'}`;
  if (typeof value === 'string') return `\`${JSON.stringify(value)}\` (string)`;
  return `\`${String(value)}\` (${typeof value})`;
}
