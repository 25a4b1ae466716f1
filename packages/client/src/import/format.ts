/** `1234567` → `1,234,567`. */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString('en-US');
}

/** A duration for humans: `0.8s`, `42s`, `4m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)}s`;
  if (seconds < 60) return `${Math.round(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${pad(Math.floor(seconds % 60))}s`;
  return `${Math.floor(minutes / 60)}h${pad(minutes % 60)}m`;
}

/** Bytes in MiB with one decimal: `92.4 MiB`. */
export function formatMebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}
