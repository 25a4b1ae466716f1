import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { importFile } from '../../examples/historical-import.js';
import { Analytics } from '../../src/index.js';
import { type Sink, startSink } from '../helpers/sink.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/import.ndjson', import.meta.url));

let sink: Sink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

describe('examples/historical-import.ts', () => {
  it('replays examples/import.ndjson through a small queue without dropping, timestamps kept', async () => {
    sink = await startSink({ delay: 2 });
    const analytics = new Analytics('KEY', { endpoint: sink.url, flushAt: 2, maxQueueSize: 4 });
    const summary = await importFile(EXAMPLE, analytics);

    expect(summary).toEqual({ delivered: 12, failed: 0, dropped: 0, rejected: 0 });
    const lines = (await readFile(EXAMPLE, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, string>);
    // Batches in flight at once may reach the sink in either order: compare in timestamp order.
    const byTime = (a: { timestamp: string }, b: { timestamp: string }) => a.timestamp.localeCompare(b.timestamp);
    const received = sink.messages.map(({ type, timestamp }) => ({ type, timestamp: String(timestamp) }));
    expect(received.sort(byTime)).toEqual(lines.map(({ type, timestamp }) => ({ type, timestamp: String(timestamp) })).sort(byTime));
  });
});
