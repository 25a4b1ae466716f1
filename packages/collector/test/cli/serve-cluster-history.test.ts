// The live page of each of two `batched-analytics serve` processes on one PostgreSQL database, as
// real child processes: each shows every event either accepted, with how it arrived (not as a
// replay when the other delivered it), in its stream and in `GET /history`, with the retry times
// the retrying one chose, also when its page was opened after many states were written; and so
// does a collector started afterwards, whose detail views list every request either made. Skips without PostgreSQL; fails so under CI=true.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, postJson, type StreamedEvent, startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const startReceiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

const track = (n: number) => ({ type: 'track', userId: `u${n % 13}`, event: 'Ordered', messageId: `m-${n}`, properties: { n } });

/** `GET /history`, every page of it, newest first. */
async function history(url: string): Promise<StreamedEvent[]> {
  const all: StreamedEvent[] = [];
  let before: string | undefined;
  for (;;) {
    const res = await fetch(`${url}/history?limit=100${before ? `&before=${before}` : ''}`);
    const { events, more } = (await res.json()) as { events: StreamedEvent[]; more: boolean };
    all.push(...events);
    if (!more || events.length === 0) return all;
    before = events.at(-1)!.id;
  }
}

/**
 * How long, at most, a page kept showing a retry of one message as due though its time had passed,
 * in ms: from a `retrying` frame's `nextAttemptAt` to the next frame of the message.
 */
function overdue(page: { all: StreamedEvent[]; arrivals: number[] }, messageId: string): number {
  const frames = page.all.flatMap((view, i) => (view.message.messageId === messageId ? [{ view, at: page.arrivals[i]! }] : []));
  let most = 0;
  for (const [i, { view }] of frames.entries()) {
    const next = view.status === 'retrying' ? view.webhooks[0]!.nextAttemptAt : undefined;
    if (next !== undefined) most = Math.max(most, (frames[i + 1]?.at ?? Date.now()) - Date.parse(next));
  }
  return most;
}

describe.skipIf(POSTGRES_SKIP !== undefined)(`serve: the live pages of two collectors on one database${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  it('shows on both pages all 480 events sent alternately to the two, with their origin and every retry time, one page opened after 400 of them', async () => {
    const database = await cluster().createDatabase();
    // One in eight of the first 400 messages, and every other one of the last 80, are answered 503
    // twice, then 200; whichever collector makes the request.
    const flaky = (messageId: string) => Number(messageId.slice(2)) % (Number(messageId.slice(2)) < 400 ? 8 : 2) === 0;
    const retried = Array.from({ length: 40 }, (_, i) => `m-${400 + 2 * i}`);
    const requests = new Map<string, number>();
    const receiver = await startReceiver((request, res) => {
      const { messageId } = JSON.parse(request.raw.toString('utf8')) as { messageId: string };
      const seen = (requests.get(messageId) ?? 0) + 1;
      requests.set(messageId, seen);
      res.writeHead(flaky(messageId) && seen <= 2 ? 503 : 200).end('{}');
    });
    const delivered = () => [...requests.entries()].filter(([id, seen]) => seen >= (flaky(id) ? 3 : 1)).length;
    const file = writeConfig(temp.dir, {
      sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
      delivery: { minRetryDelay: 1_000, maxRetryDelay: 1_500 },
      queue: { lease: 5_000, pollInterval: 100, maxInFlight: 500 },
      store: database,
    });
    const [a, b] = await Promise.all([startCollector(['--config', file, '--port', '0']), startCollector(['--config', file, '--port', '0'])]);
    const first = await watchEvents(a!.url);
    let second: Awaited<ReturnType<typeof watchEvents>> | undefined;
    try {
      // Ten at a time, alternately to each collector.
      const send = async (from: number, to: number) => {
        for (let start = from; start < to; start += 10) {
          const batch = Array.from({ length: 10 }, (_, i) => track(start + i));
          const res = await postJson(`${[a, b][(start / 10) % 2]!.url}/v1/batch`, { batch }, { authorization: basic('wk_web') });
          expect(res.status).toBe(200);
        }
      };
      // More states than the 200 a page starts with, and retries one collector claimed of what the
      // other accepted, while it followed nothing: the page must still show those as they were.
      await send(0, 400);
      await waitFor(() => delivered() === 400, 'the first 400 delivered', 30_000);
      second = await watchEvents(b!.url);
      await send(400, 480);
      await waitFor(() => delivered() === 480, 'all 480 delivered', 30_000);

      // The other collector's last states reach a page within a second or so: looked at until both
      // pages show every event delivered, for 5 s at most.
      const pages = () => Promise.all([a!, b!].map((collector) => history(collector.url)));
      let shown = await pages();
      for (const until = Date.now() + 5_000; Date.now() < until && !shown.every((views) => views.filter((view) => view.status === 'delivered').length === 480); ) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        shown = await pages();
      }
      // Each retry time the retrying collector chose, its own page showed at once; the other
      // page must have shown it soon after too, for the events sent once both pages were open: the
      // retry it shows is never overdue by much more than on the retrying collector's own page
      // (which shows how late the retry itself was, on this machine's load) plus the time a state
      // takes to reach the other page (200 ms of grouping and a read; measured up to 0.3 s, where a
      // page that kept its first retry time showed it overdue for the whole series of retries, 5 s
      // and more).
      const report = (views: StreamedEvent[]) => ({
        events: views.length,
        delivered: views.filter((view) => view.status === 'delivered').length,
        notApi: views.filter((view) => view.origin !== 'api').length,
      });
      const stale = retried.flatMap((messageId) => {
        const [onA, onB] = [first, second!].map((page) => overdue(page, messageId)) as [number, number];
        const own = Math.min(onA, onB);
        return [onA, onB].flatMap((shown, n) => (shown - own > 2_000 ? [`${'ab'[n]} ${messageId}`] : []));
      });
      expect({ a: report(shown[0]!), b: report(shown[1]!), stale }).toEqual({
        a: { events: 480, delivered: 480, notApi: 0 },
        b: { events: 480, delivered: 480, notApi: 0 },
        stale: [],
      });

      // A collector started now takes the same from the table.
      const later = await startCollector(['--config', file, '--port', '0']);
      expect(report(await history(later.url))).toEqual({ events: 480, delivered: 480, notApi: 0 });

      // Every detail view lists the same requests, whichever collector made them: the store's.
      const detail = async (url: string, id: string) => ((await (await fetch(`${url}/events/${id}`)).json()) as { attempts: { attempt: number; status: number }[] }).attempts;
      for (const messageId of retried.slice(0, 5)) {
        const id = shown[0]!.find((view) => view.message.messageId === messageId)!.id;
        const views = await Promise.all([a!, b!, later].map((collector) => detail(collector.url, id)));
        // Attempts a backing-off URL refused without a request count too: numbers rise, not by one.
        for (const attempts of views) {
          expect(attempts.map(({ status }) => status)).toEqual([503, 503, 200]);
          expect(attempts.every((attempt, i) => i === 0 || attempt.attempt > attempts[i - 1]!.attempt)).toBe(true);
        }
        expect(views[1]).toEqual(views[0]);
        expect(views[2]).toEqual(views[0]);
      }
    } finally {
      first.close();
      second?.close();
    }
  }, 120_000);
});
