// Several `batched-analytics serve` processes on one PostgreSQL database, as real child processes:
// they share the queue, a killed one's deliveries are taken over once its leases lapse, a frozen
// one cannot settle what was taken from it, and audience syncs through two of them send each
// change once. Skips without PostgreSQL; fails so under CI=true.
import { hostname } from 'node:os';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, type Collector, postJson, startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, sql, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { type Reply, useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const startReceiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

/** What a receiver saw of one message: when each request came, and what it answered. */
interface Seen {
  at: number;
  answered?: number;
  status: number;
}

/** A receiver that records every request by `messageId` and answers as `decide` says, after `delay` ms. */
async function recordingReceiver(decide: (messageId: string, seen: Seen[]) => number | 'hold', delay = 0) {
  const byMessage = new Map<string, Seen[]>();
  const held: (() => void)[] = [];
  const reply: Reply = (request, res) => {
    const { messageId } = JSON.parse(request.raw.toString('utf8')) as { messageId: string };
    const seen = byMessage.get(messageId) ?? [];
    byMessage.set(messageId, seen);
    const decision = decide(messageId, seen);
    const entry: Seen = { at: Date.now(), status: decision === 'hold' ? 200 : decision };
    seen.push(entry);
    const answer = () => {
      entry.answered = Date.now();
      res.writeHead(entry.status, { 'content-type': 'application/json' }).end('{}');
    };
    if (decision === 'hold') held.push(answer);
    else if (delay > 0) setTimeout(answer, delay);
    else answer();
  };
  const receiver = await startReceiver(reply);
  return {
    url: receiver.url,
    byMessage,
    /** Messages some request was answered 2xx for. */
    delivered: () => [...byMessage.values()].filter((seen) => seen.some((s) => s.status === 200)).length,
    /** Answers every request held so far. */
    release: () => held.splice(0).forEach((answer) => answer()),
    held: () => held.length,
  };
}

const config = (url: string, database: string, queue: Record<string, number>) => ({
  sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url }] } } }],
  // Two failures in a row open a URL's breaker, and the next answer closes it again: the retries
  // hastened then must be only those the breaker held back, never one the receiver just turned down.
  delivery: { minRetryDelay: 400, maxRetryDelay: 800, maxRequestsPerUrl: 32, breakerThreshold: 2 },
  queue,
  store: database,
});

const claimant = (collector: Collector) => `${hostname()}:${collector.child.pid}`;

const track = (n: number) => ({ type: 'track', userId: `u${n % 97}`, event: 'Ordered', messageId: `m-${n}`, properties: { n } });

describe.skipIf(POSTGRES_SKIP !== undefined)(`serve: several collectors on one database${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  it('delivers 20,000 messages sent round-robin to three collectors, one SIGKILLed mid-delivery: none lost, duplicates bounded by its claims, no retry early', async () => {
    const database = await cluster().createDatabase();
    // A tenth of the messages get a 503 on their first attempt; every answer takes 5 ms.
    const hook = await recordingReceiver((messageId, seen) => (seen.length === 0 && Number(messageId.slice(2)) % 10 === 0 ? 503 : 200), 5);
    const file = writeConfig(temp.dir, config(hook.url, database, { lease: 3_000, pollInterval: 200, maxInFlight: 500 }), 'three.json');
    const collectors = await Promise.all([0, 1, 2].map(() => startCollector(['--config', file, '--port', '0'])));
    const victim = collectors[1]!;
    const live = new Set(collectors);

    const accepted = new Set<string>();
    const total = 20_000;
    const batches = Array.from({ length: total / 100 }, (_, b) => Array.from({ length: 100 }, (_, i) => track(b * 100 + i)));
    let next = 0;
    let killedClaims: number | undefined;
    const send = async (worker: number) => {
      for (let b = next++; b < batches.length; b = next++) {
        // Round-robin over the collectors still running.
        const targets = [...live];
        const target = targets[(b + worker) % targets.length]!;
        const res = await postJson(`${target.url}/v1/batch`, { batch: batches[b] }, { authorization: basic('wk_web') }).catch(() => undefined);
        if (res?.status === 200) for (const message of batches[b]!) accepted.add(message.messageId);
        else if (live.has(target)) throw new Error(`batch ${b} refused by a live collector: ${res?.status}`);
      }
    };
    const kill = (async () => {
      await waitFor(() => hook.delivered() >= 4_000, 'deliveries under way', 60_000);
      live.delete(victim);
      await victim.stop('SIGKILL');
      // What it held when it died: its leases have not lapsed yet, so nobody has taken them over.
      const [held] = await sql<{ n: number }>(database, `SELECT count(*)::integer AS n FROM deliveries WHERE status = 'pending' AND claimed_by = $1`, [claimant(victim)]);
      killedClaims = held!.n;
    })();
    await Promise.all([send(0), send(1), send(2), send(3), kill]);
    expect(accepted.size).toBeGreaterThan(total * 0.9);

    await waitFor(() => [...accepted].every((id) => hook.byMessage.get(id)?.some((s) => s.status === 200)), 'every accepted message delivered', 90_000);
    const lost = [...accepted].filter((id) => !hook.byMessage.get(id)?.some((s) => s.status === 200));
    expect(lost).toEqual([]);
    const duplicates = [...hook.byMessage.values()].reduce((sum, seen) => sum + Math.max(0, seen.filter((s) => s.status === 200).length - 1), 0);
    expect(killedClaims).toBeDefined();
    expect(duplicates).toBeLessThanOrEqual(killedClaims!);

    // Each retry came no earlier than its backoff after the 503: half of minRetryDelay at the least.
    const retried = [...hook.byMessage.values()].filter((seen) => seen[0]!.status === 503 && seen.length > 1);
    expect(retried.length).toBeGreaterThan(1_000);
    for (const seen of retried) expect(seen[1]!.at - seen[0]!.answered!).toBeGreaterThanOrEqual(200);

    // The other two settled everything, the victim's claims included (a settled row is deleted).
    await expect.poll(async () => sql(database, `SELECT count(*)::integer AS n FROM deliveries WHERE status = 'pending'`), { timeout: 10_000, interval: 100 }).toEqual([{ n: 0 }]);
  }, 180_000);

  it('a collector frozen past its lease (SIGSTOP) loses its claims to another; resumed (SIGCONT), it settles nothing twice', async () => {
    const database = await cluster().createDatabase();
    // The frozen collector's first requests are held unanswered; the one that takes over is answered at once.
    const hook = await recordingReceiver((_, seen) => (seen.length === 0 ? 'hold' : 200));
    const file = writeConfig(temp.dir, config(hook.url, database, { lease: 1_000, pollInterval: 100, maxInFlight: 500 }), 'frozen.json');
    const frozen = await startCollector(['--config', file, '--port', '0'], { env: { DEBUG: 'analytics' } });
    const taker = await startCollector(['--config', file, '--port', '0']);

    const batch = Array.from({ length: 30 }, (_, n) => track(n));
    expect((await postJson(`${frozen.url}/v1/batch`, { batch }, { authorization: basic('wk_web') })).status).toBe(200);
    await waitFor(() => hook.held() === 30, 'the frozen collector attempting all 30');
    const claimedAt = Date.now();
    frozen.child.kill('SIGSTOP');
    try {
      await waitFor(() => hook.delivered() === 30, 'the takeover', 10_000);
      // The taker settled all 30 (a settled row is deleted): the frozen collector could not.
      const left = () => sql(database, `SELECT count(*)::integer AS n FROM deliveries WHERE status = 'pending'`);
      await expect.poll(left, { timeout: 5_000, interval: 20 }).toEqual([{ n: 0 }]);
      // Taken over only once the lease lapsed.
      for (const seen of hook.byMessage.values()) expect(seen[1]!.at - claimedAt).toBeGreaterThanOrEqual(500);

      // The frozen collector's requests now get their 200, and it wakes up to them.
      hook.release();
      frozen.child.kill('SIGCONT');
      await waitFor(() => (frozen.stderr().match(/claim lost to another process/g) ?? []).length === 30, 'the late settlements refused', 10_000);
      expect(await left()).toEqual([{ n: 0 }]);
      // One request per claim: the frozen one's and the taker's.
      for (const seen of hook.byMessage.values()) expect(seen).toHaveLength(2);
    } finally {
      frozen.child.kill('SIGCONT');
    }
  }, 60_000);

  it('sends a deletion request accepted by one of two collectors once per source, whichever delivers it', async () => {
    const database = await cluster().createDatabase();
    const deletes: { source: string; userId: string }[] = [];
    const receiver = await startReceiver((request, res) => {
      const body = JSON.parse(request.raw.toString('utf8')) as { type: string; userId: string };
      deletes.push({ source: request.path.split('/').pop()!, userId: body.userId });
      res.writeHead(200).end();
    });
    const base = config(receiver.url, database, { lease: 1_000, pollInterval: 50, maxInFlight: 500 });
    const sources = ['web', 'app'].map((name) => ({ name, writeKey: `wk_${name}`, destinations: { Webhooks: { webhooks: [{ url: `${receiver.url}/${name}` }] } } }));
    const file = writeConfig(temp.dir, { ...base, sources, adminToken: 'admin-token-0123456789' }, 'deletions.json');
    const [a] = await Promise.all([startCollector(['--config', file, '--port', '0']), startCollector(['--config', file, '--port', '0'])]);

    const res = await postJson(`${a!.url}/v1/deletions`, { userId: 'gone-1' }, { authorization: 'Bearer admin-token-0123456789' });
    expect(res).toMatchObject({ status: 200, body: { notifications: 2, sources: ['web', 'app'] } });
    await waitFor(() => deletes.length === 2, 'one notification per source');
    // Longer than a lease, with both collectors polling every 50 ms: neither sends it again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(deletes.sort((x, y) => x.source.localeCompare(y.source))).toEqual([
      { source: 'app', userId: 'gone-1' },
      { source: 'web', userId: 'gone-1' },
    ]);
  }, 30_000);

  it("shows on each collector's live page the events and delivery states of all of them, and on a collector started later", async () => {
    const database = await cluster().createDatabase();
    // m-0 gets a 503 first; every answer takes 100 ms, and each collector holds one delivery at a
    // time. The first request to be accepted is held until another comes: with one delivery each
    // at a time, from the other collector. So both deliver some of what the other shows, however
    // the two are scheduled on a busy machine.
    let first = true;
    const hook = await recordingReceiver((messageId, seen) => {
      if (messageId === 'm-0' && seen.length === 0) return 503;
      if (first) {
        first = false;
        return 'hold';
      }
      hook.release();
      return 200;
    }, 100);
    const file = writeConfig(temp.dir, config(hook.url, database, { lease: 3_000, pollInterval: 100, maxInFlight: 1 }), 'page.json');
    const [a, b] = await Promise.all([startCollector(['--config', file, '--port', '0']), startCollector(['--config', file, '--port', '0'])]);
    const pages = await Promise.all([watchEvents(a!.url), watchEvents(b!.url)]);
    try {
      const batch = Array.from({ length: 6 }, (_, n) => track(n));
      expect((await postJson(`${a!.url}/v1/batch`, { batch }, { authorization: basic('wk_web') })).status).toBe(200);

      const settled = (page: (typeof pages)[number]) => () =>
        batch.every(({ messageId }) => [...page.latest.values()].some((view) => view.message.messageId === messageId && view.status === 'delivered'));
      await waitFor(settled(pages[0]), "every event delivered on the accepting collector's page", 10_000);
      await waitFor(settled(pages[1]), "every event delivered on the other collector's page", 10_000);
      // Each collector records the states of what it delivered: both did deliver.
      expect(await sql(database, 'SELECT count(DISTINCT written_by)::integer AS n FROM events')).toEqual([{ n: 2 }]);

      // Both pages saw the retry, whichever collector made the first attempt, and both requests.
      for (const page of pages) {
        expect(page.all.some((view) => view.message.messageId === 'm-0' && view.status === 'retrying')).toBe(true);
        const flaky = [...page.latest.values()].find((view) => view.message.messageId === 'm-0')!;
        expect(flaky.webhooks).toMatchObject([{ status: 'delivered', attempts: 2, httpStatus: 200 }]);
      }

      const later = await startCollector(['--config', file, '--port', '0']);
      const page = await watchEvents(later.url);
      try {
        await waitFor(settled(page), "every event on a later collector's page", 5_000);
      } finally {
        page.close();
      }
    } finally {
      for (const page of pages) page.close();
    }
  }, 30_000);

  it('runs audience syncs sent to two collectors at once one after another: each membership change is sent once', async () => {
    const database = await cluster().createDatabase();
    const calls: { userId: string; member: boolean }[] = [];
    const receiver = await startReceiver((request, res) => {
      const body = JSON.parse(request.raw.toString('utf8')) as { userId: string; traits: { power_users: boolean } };
      calls.push({ userId: body.userId, member: body.traits.power_users });
      res.writeHead(200).end();
    });
    const file = writeConfig(temp.dir, config(receiver.url, database, { lease: 3_000, pollInterval: 100, maxInFlight: 500 }), 'audience.json');
    const [a, b] = await Promise.all([startCollector(['--config', file, '--port', '0']), startCollector(['--config', file, '--port', '0'])]);

    const users = Array.from({ length: 12 }, (_, i) => `user${i}`);
    const pick = (round: number, side: number) => users.filter((_, i) => (i * 7 + round * 3 + side * 5) % 3 !== 0);
    let changes = 0;
    for (let round = 0; round < 8; round++) {
      const [first, second] = await Promise.all(
        [a, b].map((collector, side) =>
          postJson(`${collector.url}/v1/audiences`, { name: 'Power Users', userIds: pick(round, side) }, { authorization: basic('wk_web') }),
        ),
      );
      for (const res of [first!, second!]) {
        expect(res.status).toBe(200);
        changes += res.body.joined + res.body.left;
      }
    }
    const [{ state }] = (await sql<{ state: { members: string[] } }>(database, `SELECT state FROM audiences`)) as [{ state: { members: string[] } }];
    await waitFor(() => calls.length === changes, `${changes} identify calls`, 10_000);
    // Replayed in any order, each user's calls add up to its final membership, never twice the same way.
    for (const user of users) {
      const joined = calls.filter((call) => call.userId === user && call.member).length;
      const left = calls.filter((call) => call.userId === user && !call.member).length;
      expect(joined - left, user).toBe(state.members.includes(user) ? 1 : 0);
    }
  }, 60_000);
});
