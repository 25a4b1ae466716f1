/**
 * A historical import with the client itself: replays an NDJSON file of calls (see import.ndjson)
 * with their original timestamps. Awaiting `analytics.ready()` before each call keeps at most
 * `maxQueueSize` messages in memory, whatever the file's size, and no call is ever dropped.
 *
 * The `batched-analytics import` command does the same with progress, a rejects file, messageIds
 * that repeat on a re-run, and resume after Ctrl-C; this is the loop to start from for your own
 * source (a database cursor, an export API). Run it compiled, or with a TypeScript runner:
 *   WRITE_KEY=... tsx examples/historical-import.ts examples/import.ndjson
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
// In your project: from 'batched-analytics'.
import { Analytics, MESSAGE_TYPES, type MessageType, type Summary, ValidationError } from '../src/index.js';

/** Sends every call in the file, then closes the client. */
export async function importFile(path: string, analytics: Analytics): Promise<Summary & { rejected: number }> {
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
      analytics[call.type as MessageType](call);
    } catch (error) {
      // Invalid JSON or an invalid call: report it and go on with the next line.
      rejected += 1;
      console.error(`line ${number}: ${(error as Error).message}`);
    }
  }
  return { ...(await analytics.close()), rejected };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const analytics = new Analytics(process.env.WRITE_KEY ?? '', { flushAt: 100 });
  const summary = await importFile(process.argv[2] ?? new URL('import.ndjson', import.meta.url).pathname, analytics);
  console.log(summary);
  process.exitCode = summary.failed + summary.dropped + summary.rejected > 0 ? 1 : 0;
}
