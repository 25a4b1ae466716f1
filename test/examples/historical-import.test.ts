import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { importFile } from '../../examples/historical-import.mjs';
// The example imports the built package, so the client it is given must be that one too.
import { Analytics } from 'batched-analytics';
import { type Sink, startSink } from '../helpers/sink.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/import.ndjson', import.meta.url));

let sink: Sink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

describe('examples/historical-import.mjs', () => {
  it('replays examples/import.ndjson through a small queue without dropping, timestamps kept', async () => {
    sink = await startSink({ delay: 2 });
    const analytics = new Analytics('KEY', { endpoint: sink.url, flushAt: 2, maxQueueSize: 4 });
    const summary = await importFile(EXAMPLE, analytics);

    expect(summary).toEqual({ delivered: 12, failed: 0, dropped: 0, rejected: 0 });
    const lines = (await readFile(EXAMPLE, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, string>);
    // Batches travel in parallel (maxInFlight), so they may arrive in any order.
    const sorted = (messages: Record<string, string>[]) => messages.map(({ type, timestamp }) => `${timestamp} ${type}`).sort();
    expect(sorted(sink.messages as Record<string, string>[])).toEqual(sorted(lines));
  });
});
