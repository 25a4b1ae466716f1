// The twin of format.ts for runtimes without `node:util`: the placeholders the library's lines use.

export function formatLine(template: string, ...args: unknown[]): string {
  let next = 0;
  const line = template.replace(/%[sdioOj%]/g, (placeholder) => {
    if (placeholder === '%%') return '%';
    if (next >= args.length) return placeholder;
    const value = args[next++];
    if (placeholder === '%d' || placeholder === '%i') return String(Number(value));
    if (placeholder === '%s') return value instanceof Error ? value.message : String(value);
    return inspect(value);
  });
  return next < args.length ? `${line} ${args.slice(next).map(inspect).join(' ')}` : line;
}

function inspect(value: unknown): string {
  if (value instanceof Error) return value.stack ?? `${value.name}: ${value.message}`;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
