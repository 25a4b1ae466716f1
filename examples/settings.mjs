// Where the examples send: the write key from WRITE_KEY (required), the endpoint from
// ANALYTICS_ENDPOINT (default: the hosted service). Without a write key an example prints one line
// and exits with code 2, as a command-line tool would.
export function settingsFromEnv() {
  const writeKey = process.env.WRITE_KEY;
  if (!writeKey) {
    console.error('Set WRITE_KEY to your source’s write key (wk_example for examples/collector.json).');
    process.exit(2);
  }
  return { writeKey, endpoint: process.env.ANALYTICS_ENDPOINT ?? 'https://api.segment.io' };
}
