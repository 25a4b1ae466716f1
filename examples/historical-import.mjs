// A historical import with the client itself: replays an NDJSON file of calls (see import.ndjson)
// with their original timestamps. Awaiting `analytics.ready()` before each call keeps at most
// `maxQueueSize` messages in memory, whatever the file's size, and no call is ever dropped.
// Exits 1 when a line was rejected or a call not delivered.
//
// The `batched-analytics import` command does the same with progress, a rejects file, messageIds
// that repeat on a re-run, and resume after Ctrl-C; this is the loop to start from for your own
// source (a database cursor, an export API).
//
//   npm run build && WRITE_KEY=wk_example ANALYTICS_ENDPOINT=http://127.0.0.1:8088 node examples/historical-import.mjs examples/import.ndjson
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Analytics, MESSAGE_TYPES, ValidationError } from 'batched-analytics';
import { settingsFromEnv } from './settings.mjs';

/**
 * Sends every call in the file, then closes the client.
 * @param {string} path
 * @param {Analytics} analytics
 * @returns {Promise<import('batched-analytics').Summary & { rejected: number }>}
 */
export async function importFile(path, analytics) {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  let rejected = 0;
  for await (const line of lines) {
    number += 1;
    if (line.trim() === '') continue;
    // Wait for room: this is what keeps memory flat against a slow endpoint.
    await analytics.ready();
    try {
      const call = JSON.parse(line);
      if (!MESSAGE_TYPES.includes(call.type)) throw new ValidationError('type', `unknown call type ${JSON.stringify(call.type)}`);
      analytics[call.type](call);
    } catch (error) {
      // Invalid JSON or an invalid call: report it and go on with the next line.
      rejected += 1;
      console.error(`line ${number}: ${error.message}`);
    }
  }
  return { ...(await analytics.close()), rejected };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { writeKey, endpoint } = settingsFromEnv();
  const analytics = new Analytics(writeKey, { endpoint, flushAt: 100 });
  analytics.on('error', (error) => console.error('delivery failed:', error.message));
  const summary = await importFile(process.argv[2] ?? fileURLToPath(new URL('import.ndjson', import.meta.url)), analytics);
  console.log(summary);
  process.exitCode = summary.failed + summary.dropped + summary.rejected > 0 ? 1 : 0;
}
