// The tallied histogram against prom-client's own: the same observations must give the same text
// at a scrape, bucket for bucket (the metrics test judges the whole exposition with promtool).
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TalliedHistogram } from '../../src/observe/tallied-histogram.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const NAME = 'batched_analytics_webhook_request_duration_seconds';
const HELP = 'How long requests to receivers took.';

/** Values on the bounds, between them, below the first and above the last, by label set. */
const OBSERVED: [labels: { source: string; url: string }, seconds: number[]][] = [
  [{ source: 'web', url: 'https://hooks.example.com/in' }, [0, 0.001, 0.005, 0.0051, 0.01, 0.3, 1, 2.5, 9.999, 10, 10.001, 60]],
  // A label value the exposition has to escape.
  [{ source: 'app "mobile"', url: 'https://other.example.com/a\\b' }, [0.02, 0.02, 0.7]],
  // A URL with no requests yet: no series, as prom-client shows none before a label set's first observation.
  [{ source: 'web', url: 'https://idle.example.com/' }, []],
];

describe('TalliedHistogram', () => {
  it("serves exactly the text prom-client's Histogram serves for the same observations, before and after a reset", async () => {
    const theirs = new Registry();
    const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ['source', 'url'], buckets: BUCKETS, registers: [theirs] });
    const ours = new Registry();
    const tallied = new TalliedHistogram({ name: NAME, help: HELP, buckets: BUCKETS, registry: ours });
    const tallies = OBSERVED.map(([labels, seconds]) => {
      const tally = tallied.tally(labels);
      for (const value of seconds) {
        histogram.observe(labels, value);
        tallied.observe(tally, value);
      }
      return tally;
    });
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain(`${NAME}_bucket{le="0.005",source="web",url="https://hooks.example.com/in"} 3\n`);
    expect(text).toContain(`${NAME}_count{source="app \\"mobile\\"",url="https://other.example.com/a\\\\b"} 3\n`);
    expect(text).not.toContain('idle.example.com');

    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    // Observed again after the reset: the label set shows again, in both.
    const [labels, seconds] = OBSERVED[0]!;
    histogram.observe(labels, seconds[2]!);
    tallied.observe(tallies[0]!, seconds[2]!);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
