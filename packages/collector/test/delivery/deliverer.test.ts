// The Deliverer against a real journal store and a real receiver: how it takes due work from the store.
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Deliverer } from '../../src/delivery/deliverer.js';
import { DeliveryEmitter } from '../../src/delivery/events.js';
import { JournalStore } from '../../src/delivery/journal/store.js';
import type { Claimed, Store } from '../../src/delivery/store.js';
import { tempDir, waitFor } from '../../../../test/helpers/collector.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../../../../test/helpers/loopback.js';
import { delivery } from './store-contract.js';
import { Reporter } from '../../src/config/report.js';
import type { DeliveryOptions } from '../../src/config/config.js';
import { recordingLogger } from '../observe/recording-logger.js';

const temp = tempDir();
const closing: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});
afterAll(() => temp.remove());

/** A journal in `temp.dir/name`, open, closed after the test. */
async function openJournal(name: string): Promise<JournalStore> {
  const journal = new JournalStore(`${temp.dir}/${name}`);
  await journal.open();
  closing.push(() => journal.close());
  return journal;
}

/**
 * A journal whose `claim` calls are recorded: how many deliveries each asked for, and got. A claim's
 * answer waits for what `hold` returns for it (claims counted from 1), if anything.
 */
async function recordedJournal(name: string, hold?: (claim: number) => Promise<void> | undefined): Promise<{ store: Store; claims: { limit: number; got: number }[] }> {
  const journal = await openJournal(name);
  const claims: { limit: number; got: number }[] = [];
  const claim = journal.claim.bind(journal);
  journal.claim = async (limit: number, lease: number): Promise<Claimed[]> => {
    const got = await claim(limit, lease);
    claims.push({ limit, got: got.length });
    await hold?.(claims.length);
    return got;
  };
  return { store: journal, claims };
}

// One request at a time by default: each attempt that ends frees one slot.
function deliverer(store: Store, receiver: Loopback, maxInFlight: number, delivery: DeliveryOptions = { maxRequestsPerUrl: 1 }): Deliverer {
  const made = new Deliverer({
    sources: new Map([['web', { name: 'web', writeKey: 'wk', webhooks: { webhooks: [{ url: receiver.url }] } }]]),
    delivery,
    queue: { lease: 30_000, pollInterval: 60_000, maxInFlight },
    store,
    events: new DeliveryEmitter(),
    report: new Reporter(recordingLogger()),
  });
  closing.push(() => made.close());
  return made;
}

/** Accepts `count` deliveries unclaimed and runs a Deliverer until the receiver has them all: the claims it made. */
async function deliverAll(count: number, maxInFlight: number): Promise<{ limit: number; got: number }[]> {
  const receiver = await startLoopback();
  closing.push(() => receiver.close());
  const { store, claims } = await recordedJournal(`${count}-${maxInFlight}`);
  await store.accept(Array.from({ length: count }, (_, i) => delivery(`d${i}`)));
  deliverer(store, receiver, maxInFlight).start();
  await waitFor(() => receiver.requests.length === count, `the ${count} deliveries`);
  return claims;
}

describe('Deliverer', () => {
  it('claims due work a quarter of maxInFlight at a time, not one slot as each frees', async () => {
    const claims = await deliverAll(30, 8);
    expect(claims[0]).toEqual({ limit: 8, got: 8 });
    // 22 left after the first claim, taken two (a quarter of 8) or more at a time.
    expect(claims.every(({ limit }) => limit >= 2)).toBe(true);
    expect(claims.reduce((sum, { got }) => sum + got, 0)).toBe(30);
    expect(claims.length).toBeLessThanOrEqual(1 + 22 / 2 + 1);
  });

  it('with maxInFlight 1, claims each delivery as the one before ends', async () => {
    const claims = await deliverAll(3, 1);
    expect(claims.filter(({ got }) => got > 0)).toEqual(Array(3).fill({ limit: 1, got: 1 }));
  });

  it('claims again at once when an acceptance left work unclaimed while a claim that came back short was under way', async () => {
    const receiver = await startLoopback();
    closing.push(() => receiver.close());
    // The first claim finds nothing, and its answer is held until the acceptance below was told.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { store, claims } = await recordedJournal('signalled', (claim) => (claim === 1 ? held : undefined));
    // pollInterval is a minute: only the signal can bring these three out within the test.
    const made = deliverer(store, receiver, 8);
    made.start();
    await waitFor(() => claims.length === 1, 'the first claim');
    await store.accept([delivery('a'), delivery('b'), delivery('c')]);
    made.take([], 3);
    release();
    await waitFor(() => receiver.requests.length === 3, 'the three left unclaimed', 3_000);
  });

  it('gives up at once, with no request, a delivery no URL\'s filter takes by its first attempt (the filters were reloaded since it was accepted)', async () => {
    const receiver = await startLoopback();
    closing.push(() => receiver.close());
    const store = await openJournal('filtered');
    await store.accept([delivery('Signed Up', Date.now())]);
    const events = new DeliveryEmitter();
    const settled: { outcome: string; reason: string | undefined }[] = [];
    events.on('settled', ({ outcome, error }) => settled.push({ outcome, reason: error?.message }));
    const made = new Deliverer({
      sources: new Map([['web', { name: 'web', writeKey: 'wk', webhooks: { webhooks: [{ url: receiver.url, filter: { types: ['identify'] } }] } }]]),
      delivery: {},
      queue: { lease: 30_000, pollInterval: 60_000, maxInFlight: 4 },
      store,
      events,
      report: new Reporter(recordingLogger()),
    });
    closing.push(() => made.close());
    made.start();
    await expect.poll(async () => (await store.backlog()).pending, { timeout: 5_000, interval: 20 }).toBe(0);
    expect(receiver.requests).toHaveLength(0);
    expect(made.inFlight).toBe(0);
    // The page and the metrics learn it as given up, and why.
    expect(settled).toEqual([{ outcome: 'failed', reason: 'no webhook URL\'s filter takes it since the config was reloaded' }]);
  });

  it('when a URL answers again, pulls forward what its breaker refused, not the retries whose own request it turned down a moment ago', async () => {
    // Two requests at a time. `f1` and `f2` are answered 503 at once: the first frees its slot for
    // `ok`, the second opens the breaker (two failures in a row), which refuses `w`, unsent. `ok` is
    // answered 200 a moment later: the URL answers again.
    const messageOf = (request: LoopbackRequest) => (JSON.parse(request.body) as { messageId: string }).messageId;
    let failures = 0;
    let ok: ServerResponse | undefined;
    let okAnsweredAt = Infinity;
    const arrivals = new Map<string, number[]>();
    const answerOk = () => {
      if (failures === 2 && ok !== undefined) {
        setTimeout(() => {
          okAnsweredAt = Date.now();
          ok!.end('{}');
        }, 100);
      }
    };
    const receiver = await startLoopback((request, res) => {
      const id = messageOf(request);
      arrivals.set(id, [...(arrivals.get(id) ?? []), Date.now()]);
      if (arrivals.get(id)!.length === 1 && (id === 'm-f1' || id === 'm-f2')) {
        res.writeHead(503).end();
        failures += 1;
        answerOk();
      } else if (id === 'm-ok') {
        ok = res;
        answerOk();
      } else res.end('{}');
    });
    closing.push(() => receiver.close());
    const store = await openJournal('recovered');
    const now = Date.now();
    await store.accept(['f1', 'f2', 'ok', 'w'].map((id) => delivery(id, now)));
    deliverer(store, receiver, 8, { maxRequestsPerUrl: 2, breakerThreshold: 2, minRetryDelay: 30_000, maxRetryDelay: 60_000 }).start();

    // `w` was refused while the breaker was open: it goes once the URL answers again, not after 15 s or more.
    await waitFor(() => arrivals.has('m-w'), 'the refused delivery, pulled forward', 5_000);
    expect(arrivals.get('m-w')![0]).toBeGreaterThanOrEqual(okAnsweredAt);
    // `f1` and `f2` keep their backoff (15 to 30 s): the receiver turned each down a moment ago.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([...arrivals].map(([id, at]) => [id, at.length]).sort()).toEqual([['m-f1', 1], ['m-f2', 1], ['m-ok', 1], ['m-w', 1]]);
  });
});
