// The `Store` contract: what the collector relies on from any store. Every implementation runs it
// (test/delivery/journal/store.test.ts, test/delivery/postgres-store.test.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Arrival, AttemptRecord, Claimed, Delivery, Store } from '../../src/delivery/store.js';
import { urlStatesContract } from './url-states-contract.js';
import { type AudienceState, type Message, prepareWebhook } from 'batched-analytics/internal';

/** Where a store keeps its data: fresh and empty for each test. */
export interface StorePlace {
  /**
   * A new store on this place's data, not yet opened: two made one after the other see the same data.
   * @param options.dedupeWindow the store's de-duplication window, in ms; @default the store's
   */
  make(options?: { dedupeWindow?: number }): Store;
  remove(): Promise<void> | void;
}

export const message = (id: string, properties: Message['properties'] = {}): Message => ({
  type: 'track',
  userId: 'u',
  event: id,
  properties,
  messageId: `m-${id}`,
  timestamp: '2024-01-01T00:00:00.000Z',
  context: {},
});

/** A delivery of `message(id)` as the collector makes it, accepted at `acceptedAt`. */
export const delivery = (id: string, acceptedAt = 1_000, properties?: Message['properties']): Delivery => ({
  id,
  source: 'web',
  message: message(id, properties),
  webhook: prepareWebhook(message(id, properties), acceptedAt),
});

/**
 * Registers the contract's tests for one implementation.
 * @param place makes a fresh place per test (a data dir, a database).
 * @param skip when set, the suite is skipped and its title says why.
 */
export function storeContract(name: string, place: () => Promise<StorePlace>, skip?: string): void {
  describe.skipIf(skip !== undefined)(`${name} (the Store contract)${skip ? ` skipped: ${skip}` : ''}`, () => {
    let current: StorePlace;
    const made: Store[] = [];
    beforeEach(async () => {
      current = await place();
    });
    afterEach(async () => {
      await Promise.all(made.splice(0).map((store) => store.close()));
      await current.remove();
    });
    const store = (options?: { dedupeWindow?: number }): Store => {
      const created = current.make(options);
      made.push(created);
      return created;
    };
    /** Closes `first` and opens a new store on the same data: what a restart recovers. */
    const reopen = async (first: Store, options?: { dedupeWindow?: number }) => {
      await first.close();
      const second = store(options);
      return { second, snapshot: await second.open() };
    };

    /** Everything due now, claimed for a minute: what a collector would attempt next. */
    const due = (opened: Store, limit = 1_000) => opened.claim(limit, 60_000);
    const ids = (claimed: readonly Claimed[]) => claimed.map((held) => held.delivery.id);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    describe('de-duplication (ingest)', () => {
      /** An arrival of `message(id)` in `source`, forwarded unless `forwarded` is false. */
      const arrival = (id: string, source = 'web', forwarded = true): Arrival => {
        const made = { ...delivery(`${id}@${source}#${Math.random()}`), source };
        made.message = message(id);
        return { source, messageId: `m-${id}`, delivery: forwarded ? made : undefined };
      };
      const messageIds = (claimed: readonly Claimed[]) => claimed.map((held) => (held.delivery.message as { messageId: string }).messageId);
      afterEach(() => {
        vi.useRealTimers();
      });

      it('records a messageId once per source: a repeat in the same call, in a later call or after a reopen is not recorded and says when the first was accepted', async () => {
        vi.useFakeTimers({ toFake: ['Date'], now: 1_700_000_000_000 });
        const first = store();
        await first.open();
        const once = await first.ingest([arrival('a'), arrival('b'), arrival('a'), arrival('a', 'app')]);
        expect(once.repeats).toEqual([undefined, undefined, 1_700_000_000_000, undefined]);
        vi.setSystemTime(1_700_000_005_000);
        expect((await first.ingest([arrival('b'), arrival('c')])).repeats).toEqual([1_700_000_000_000, undefined]);

        const { second } = await reopen(first);
        vi.setSystemTime(1_700_000_009_000);
        expect((await second.ingest([arrival('c'), arrival('a', 'app'), arrival('d')])).repeats).toEqual([1_700_000_005_000, 1_700_000_000_000, undefined]);
        const claimed = await due(second);
        expect(claimed.map((held) => `${held.delivery.source}:${(held.delivery.message as { messageId: string }).messageId}`).sort()).toEqual(
          ['web:m-a', 'web:m-b', 'app:m-a', 'web:m-c', 'web:m-d'].sort(),
        );
      });

      it('claims the ids of messages forwarded nowhere too, and claims for the caller the first deliveries recorded', async () => {
        const opened = store();
        await opened.open();
        const taken = await opened.ingest([arrival('x', 'web', false), arrival('y'), arrival('y'), arrival('z')], { claim: 1, lease: 60_000 });
        expect(messageIds(taken.claimed)).toEqual(['m-y']);
        expect(taken.repeats.map((at) => at !== undefined)).toEqual([false, false, true, false]);
        expect((await opened.ingest([arrival('x')])).repeats[0]).toBeTypeOf('number');
        expect(messageIds(await due(opened))).toEqual(['m-z']);
      });

      it('records one of two concurrent acceptances of the same messageId', async () => {
        const opened = store();
        await opened.open();
        const both = await Promise.all([opened.ingest([arrival('same'), arrival('own-1')]), opened.ingest([arrival('same'), arrival('own-2')])]);
        expect(both.map(({ repeats }) => repeats[0] === undefined).sort()).toEqual([false, true]);
        expect(messageIds(await due(opened)).sort()).toEqual(['m-own-1', 'm-own-2', 'm-same']);
      });

      it('forgets an id once the window has passed, also across a reopen', async () => {
        vi.useFakeTimers({ toFake: ['Date'], now: 1_700_000_000_000 });
        const first = store({ dedupeWindow: 1_000 });
        await first.open();
        await first.ingest([arrival('w')]);
        vi.setSystemTime(1_700_000_000_999);
        expect((await first.ingest([arrival('w')])).repeats).toEqual([1_700_000_000_000]);
        vi.setSystemTime(1_700_000_001_000);
        expect((await first.ingest([arrival('w')])).repeats).toEqual([undefined]);
        vi.setSystemTime(1_700_000_001_500);
        const { second } = await reopen(first, { dedupeWindow: 1_000 });
        expect((await second.ingest([arrival('w')])).repeats).toEqual([1_700_000_001_000]);
        vi.setSystemTime(1_700_000_002_001);
        expect((await second.ingest([arrival('w')])).repeats).toEqual([undefined]);
        expect(messageIds(await due(second))).toEqual(['m-w', 'm-w', 'm-w']);
      });

      it('with a window of 0 records every arrival and remembers nothing', async () => {
        const first = store({ dedupeWindow: 0 });
        await first.open();
        expect((await first.ingest([arrival('o'), arrival('o')])).repeats).toEqual([undefined, undefined]);
        const { second } = await reopen(first);
        expect((await second.ingest([arrival('o')])).repeats).toEqual([undefined]);
        expect(messageIds(await due(second))).toEqual(['m-o', 'm-o', 'm-o']);
      });
    });

    it('hands out, after a reopen, every accepted delivery in the order accepted, with its webhook as fixed at acceptance', async () => {
      const first = store();
      expect(await first.open()).toEqual({ pending: 0 });
      await first.accept([delivery('a', 111), delivery('b', 222)]);
      await first.accept([delivery('c', 1_700_000_000_123)]);
      await first.accept([]);

      const { second, snapshot } = await reopen(first);
      expect(snapshot).toEqual({ pending: 3 });
      const claimed = await due(second);
      expect(claimed.map((held) => held.delivery)).toEqual([delivery('a', 111), delivery('b', 222), delivery('c', 1_700_000_000_123)]);
      expect(claimed.map((held) => held.attempt)).toEqual([1, 1, 1]);
    });

    it('never hands out again what was settled, delivered or failed', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('a'), delivery('b'), delivery('c')]);
      const [a, b, c] = await due(first);
      expect(await first.settle(b!, 'delivered')).toBe(true);
      expect(await first.settle(c!, 'failed')).toBe(true);
      // What a collector does with the claims it holds when it stops.
      await first.release([a!]);

      const { second, snapshot } = await reopen(first);
      expect(snapshot.pending).toBe(1);
      const [left] = await due(second);
      expect(left!.delivery.id).toBe('a');
      await second.settle(left!, 'delivered');
      expect((await reopen(second)).snapshot.pending).toBe(0);
    });

    it('records every one of many concurrent settlements, each with its own outcome', async () => {
      const first = store();
      await first.open();
      const all = Array.from({ length: 60 }, (_, i) => `s${i}`);
      await first.accept(all.map((id) => delivery(id)));
      const claimed = await due(first);
      // Every third is left pending; the others settle at once, delivered or failed in turn.
      const settled = await Promise.all(claimed.filter((_, i) => i % 3 !== 0).map((held, i) => first.settle(held, i % 2 ? 'failed' : 'delivered')));
      expect(settled.every(Boolean)).toBe(true);
      await first.release(claimed.filter((_, i) => i % 3 === 0));

      const { second } = await reopen(first);
      expect(ids(await due(second))).toEqual(all.filter((_, i) => i % 3 === 0));
    });

    it('gives back the body bytes exactly: non-ASCII, escapes, NUL and a lone surrogate', async () => {
      const tricky = { text: 'Café ☕ 日本 👩‍💻', quotes: '"q" \\ \\u0041 / \b\f\n\r\t', nul: 'a\u0000b', lone: 'x\ud800y', big: 1e21, small: 5e-7 };
      const original = delivery('bytes', 5_000, tricky);
      const first = store();
      await first.open();
      await first.accept([original]);

      const { second } = await reopen(first);
      const [back] = await due(second);
      expect(Buffer.from(back!.delivery.webhook.body).equals(Buffer.from(original.webhook.body))).toBe(true);
      expect(back!.delivery.webhook.body).toBe(original.webhook.body);
      expect(back!.delivery.message).toEqual(original.message);
    });

    it('tells its backlog: deliveries pending and when the oldest was accepted, claimed or not, across a reopen', async () => {
      const first = store();
      await first.open();
      expect(await first.backlog!()).toEqual({ pending: 0 });
      await first.accept([delivery('a', 5_000), delivery('b', 6_000)]);
      await first.accept([delivery('c', 7_000)]);
      const [a] = await due(first, 1);
      expect(await first.backlog!()).toEqual({ pending: 3, oldestAt: 5_000 });
      await first.settle(a!, 'delivered');
      expect(await first.backlog!()).toEqual({ pending: 2, oldestAt: 6_000 });

      const { second } = await reopen(first);
      expect(await second.backlog!()).toEqual({ pending: 2, oldestAt: 6_000 });
    });

    it('claims the first deliveries of an acceptance for the caller, and hands out the rest to claim()', async () => {
      const first = store();
      await first.open();
      const claimed = await first.accept([delivery('a'), delivery('b'), delivery('c')], { claim: 2, lease: 60_000 });
      expect(claimed.map((held) => [held.delivery.id, held.attempt])).toEqual([['a', 1], ['b', 1]]);
      expect(ids(await due(first))).toEqual(['c']);
      expect(await due(first)).toEqual([]);
      expect(await first.settle(claimed[0]!, 'delivered')).toBe(true);
    });

    it('says of each claim whether this store accepted the delivery: yes for its own, at acceptance, by claim() and after a retry; no for one it found on opening', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('earlier')]);
      const { second } = await reopen(first);
      const claimed = await second.accept([delivery('a'), delivery('b'), delivery('c')], { claim: 1, lease: 60_000 });
      expect(claimed.map((held) => [held.delivery.id, held.acceptedHere])).toEqual([['a', true]]);
      const later = await due(second);
      expect(later.map((held) => [held.delivery.id, held.acceptedHere])).toEqual([['earlier', false], ['b', true], ['c', true]]);
      expect(await second.retry(later[1]!, 0, [0])).toBe(true);
      expect((await due(second)).map((held) => [held.delivery.id, held.acceptedHere])).toEqual([['b', true]]);
    });

    it('hands each due delivery to one of many concurrent claims, oldest first, up to each limit', async () => {
      const first = store();
      await first.open();
      const all = Array.from({ length: 40 }, (_, i) => `q${String(i).padStart(2, '0')}`);
      await first.accept(all.map((id) => delivery(id)));
      const claims = await Promise.all(Array.from({ length: 8 }, () => first.claim(6, 60_000)));
      const handed = claims.flatMap(ids);
      expect(claims.every((claimed) => claimed.length <= 6)).toBe(true);
      expect(new Set(handed).size).toBe(handed.length);
      expect(handed.sort()).toEqual(all);
      expect(new Set(claims.flatMap((claimed) => claimed.map((held) => held.claim))).size).toBe(claims.filter((c) => c.length > 0).length);
    });

    it('hands a delivery out again once its lease lapses, and refuses the lapsed claim its settlement and retry', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('a')]);
      const [lapsing] = await first.claim(10, 150);
      expect(await first.claim(10, 150)).toEqual([]);
      await sleep(250);

      const [taken] = await first.claim(10, 60_000);
      expect(taken).toMatchObject({ delivery: { id: 'a' }, attempt: 2 });
      expect(taken!.claim).not.toBe(lapsing!.claim);
      expect(await first.settle(lapsing!, 'delivered')).toBe(false);
      expect(await first.retry(lapsing!, 0, [0])).toBe(false);
      expect(await first.renew([lapsing!, taken!], 60_000)).toEqual([lapsing]);
      expect(await first.settle(taken!, 'delivered')).toBe(true);
      expect((await reopen(first)).snapshot.pending).toBe(0);
    });

    it('keeps a renewed claim past its first lease', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('a')]);
      const [held] = await first.claim(10, 300);
      await sleep(150);
      expect(await first.renew([held!], 300)).toEqual([]);
      await sleep(200);
      // 350 ms after the claim: past the first lease, within the renewed one.
      expect(await first.claim(10, 300)).toEqual([]);
      expect(await first.settle(held!, 'delivered')).toBe(true);
    });

    it('schedules a retry: not handed out before its time, then the next attempt with the targets left', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('a'), delivery('b')]);
      const [a, b] = await due(first);
      expect(await first.retry(a!, 250, [1, 2])).toBe(true);
      // 30 days: more milliseconds than a 32-bit integer holds.
      expect(await first.retry(b!, 30 * 24 * 3_600_000, [0])).toBe(true);
      // The claim that scheduled it no longer holds it.
      expect(await first.settle(a!, 'delivered')).toBe(false);
      expect(await due(first)).toEqual([]);
      await sleep(300);

      const [again] = await due(first);
      expect(again).toMatchObject({ delivery: { id: 'a' }, attempt: 2, targets: [1, 2] });
      expect(await due(first)).toEqual([]);
    });

    it('hands out due deliveries in the order they came due, not the order accepted', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('a'), delivery('b'), delivery('c')]);
      const [a, b, c] = await due(first);
      await first.retry(a!, 300, [0]);
      await first.retry(b!, 200, [0]);
      await first.retry(c!, 100, [0]);
      await sleep(350);
      expect(ids(await due(first))).toEqual(['c', 'b', 'a']);
    });

    it('hastens the retries of one source waiting for a webhook: due at once, the rest left as they are', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('a'), delivery('b'), delivery('c'), delivery('own'), delivery('held'), { ...delivery('app'), source: 'app' }]);
      const [a, b, c, own, held, app] = await due(first);
      await first.retry(a!, 60_000, [0, 1], [], [0, 1]);
      await first.retry(b!, 60_000, [1], [], [1]);
      await first.retry(c!, 100, [0], [], [0]);
      await first.retry(own!, 60_000, [0, 1], [], [1]);
      await first.retry(app!, 60_000, [0], [], [0]);
      await first.accept([delivery('fresh')]);
      await sleep(150);

      // Only `a` waits for webhook 0 of source web: `b` waits for 1 alone, `own` backs off on its
      // own at 0 (webhook 0 turned it down), `c` and `fresh` are due already, `held` is claimed,
      // `app` is another source's.
      expect(await first.hasten('web', 0)).toBe(1);
      expect((await due(first)).map((claimed) => [claimed.delivery.id, claimed.attempt, claimed.targets])).toEqual([
        ['fresh', 1, undefined],
        ['c', 2, [0]],
        ['a', 2, [0, 1]],
      ]);
      expect(await first.hasten('web', 0)).toBe(0);
      expect(await first.settle(held!, 'delivered')).toBe(true);
      expect(await first.hasten('web', 1)).toBe(2);
      expect(ids(await due(first))).toEqual(['b', 'own']);
    });

    it('keeps what a retry waits for across a reopen: hastened for it, and for nothing else', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('waits'), delivery('own')]);
      const [waits, own] = await due(first);
      await first.retry(waits!, 60_000, [0, 1], [], [1]);
      await first.retry(own!, 60_000, [0, 1]);

      const { second } = await reopen(first);
      expect(await second.hasten('web', 0)).toBe(0);
      expect(await second.hasten('web', 1)).toBe(1);
      expect(ids(await due(second))).toEqual(['waits']);
    });

    it('keeps a retry\'s time, attempts and targets across a reopen', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('soon'), delivery('later')]);
      const [soon, later] = await due(first);
      await first.retry(soon!, 0, [0]);
      await first.retry(later!, 60_000, [1]);

      const { second, snapshot } = await reopen(first);
      expect(snapshot.pending).toBe(2);
      expect(await due(second)).toEqual([expect.objectContaining({ delivery: delivery('soon'), attempt: 2, targets: [0] })]);
    });

    it('takes back released claims unattempted: due at once, the same attempt number', async () => {
      const first = store();
      await first.open();
      const claimed = await first.accept([delivery('a'), delivery('b')], { claim: 2, lease: 60_000 });
      await first.release(claimed);
      expect(await first.settle(claimed[0]!, 'delivered')).toBe(false);
      const again = await due(first);
      expect(again.map((held) => [held.delivery.id, held.attempt])).toEqual([['a', 1], ['b', 1]]);
    });

    it('syncs an audience from the state its previous sync recorded, per source, in memory and across a reopen', async () => {
      const first = store();
      await first.open();
      const seen: (AudienceState | undefined)[] = [];
      const sync = (opened: Store, source: string, members: string[], deliveries: Delivery[] = []) =>
        opened.syncAudience(source, 'Power Users', (previous) => {
          seen.push(previous);
          return { deliveries, state: { audience: 'Power Users', members } };
        });
      await sync(first, 'web', ['u1'], [delivery('x')]);
      await sync(first, 'web', ['u1', 'u2']);
      await sync(first, 'app', []);
      expect(seen).toEqual([undefined, { audience: 'Power Users', members: ['u1'] }, undefined]);

      const { second, snapshot } = await reopen(first);
      expect(snapshot.pending).toBe(1);
      const { plan, claimed } = await second.syncAudience('web', 'Power Users', (previous) => ({ deliveries: [delivery('y')], state: previous!, note: 'kept' }), {
        claim: 1,
        lease: 60_000,
      });
      expect(plan).toEqual({ deliveries: [delivery('y')], state: { audience: 'Power Users', members: ['u1', 'u2'] }, note: 'kept' });
      expect(ids(claimed)).toEqual(['y']);
      await sync(second, 'app', ['u9']);
      expect(seen.at(-1)).toEqual({ audience: 'Power Users', members: [] });
    });

    it('runs concurrent syncs of one audience one after another: each starts from the state the one before recorded', async () => {
      const first = store();
      await first.open();
      const runs = Array.from({ length: 5 }, (_, i) =>
        first.syncAudience('web', 'A', (previous) => ({ deliveries: [delivery(`d${i}`)], state: { audience: 'A', members: [...(previous?.members ?? []), `u${i}`] } })),
      );
      const plans = (await Promise.all(runs)).map(({ plan }) => plan.state.members.length);
      expect(plans.sort()).toEqual([1, 2, 3, 4, 5]);
      expect(ids(await due(first))).toHaveLength(5);
    });

    it('records an audience sync all or nothing: one refused leaves neither its deliveries nor its state', async () => {
      const first = store();
      await first.open();
      const state = (members: string[]) => ({ audience: 'A', members });
      await first.syncAudience('web', 'A', () => ({ deliveries: [], state: state(['u1']) }));
      // A BigInt cannot be stored as JSON: the second delivery fails the whole sync.
      const unstorable = { ...delivery('bad'), message: { ...message('bad'), properties: { n: 1n } } } as unknown as Delivery;
      await expect(first.syncAudience('web', 'A', () => ({ deliveries: [delivery('good'), unstorable], state: state(['u2']) }))).rejects.toThrow();
      await expect(
        first.syncAudience('web', 'A', () => {
          throw new Error('plan refused');
        }),
      ).rejects.toThrow('plan refused');

      const { second, snapshot } = await reopen(first);
      expect(snapshot.pending).toBe(0);
      let previous: AudienceState | undefined;
      await second.syncAudience('web', 'A', (before) => {
        previous = before;
        return { deliveries: [], state: state(['u3']) };
      });
      expect(previous).toEqual(state(['u1']));
    });

    it('keeps every one of many concurrent acceptances', async () => {
      const first = store();
      await first.open();
      const all = Array.from({ length: 50 }, (_, i) => `c${i}`);
      await Promise.all(all.map((id) => first.accept([delivery(id)])));

      const { second } = await reopen(first);
      expect(ids(await due(second)).sort()).toEqual([...all].sort());
    });

    describe('delivery records (lookup, find)', () => {
      const answer = (attempt: number, status?: number, error?: string): AttemptRecord => ({
        at: 1_700_000_000_000 + attempt,
        attempt,
        url: 'http://receiver.test/hook',
        ...(status === undefined ? {} : { status }),
        ...(error === undefined ? {} : { error }),
        durationMs: 10 + attempt,
      });

      it('keeps each delivery of a messageId, as accepted, with every attempt and where it stands, across a reopen', async () => {
        const first = store();
        await first.open();
        const again = { ...delivery('x', 2_000), id: 'x-again' };
        await first.accept([delivery('x'), delivery('y')]);
        await first.accept([again]);
        const [x, y] = await due(first);
        await first.retry(x!, 0, [0], [answer(1, 500, 'the receiver answered 500'), answer(1, undefined, 'connect ECONNREFUSED')]);
        const before = Date.now();
        await first.settle(y!, 'delivered', [answer(1, 200)]);
        const [retried] = (await due(first)).filter((held) => held.delivery.id === 'x');
        expect(retried!.attempt).toBe(2);
        await first.settle(retried!, 'failed', [answer(2, 400, 'the receiver answered 400')]);
        const after = Date.now();

        const records = await first.lookup('m-x');
        expect(records.map((record) => [record.delivery.id, record.state])).toEqual([
          ['x', 'failed'],
          ['x-again', 'pending'],
        ]);
        expect(records[0]!.delivery).toEqual(delivery('x'));
        expect(records[0]!.attempts).toEqual([answer(1, 500, 'the receiver answered 500'), answer(1, undefined, 'connect ECONNREFUSED'), answer(2, 400, 'the receiver answered 400')]);
        expect(records[0]!.settledAt).toBeGreaterThanOrEqual(before - 1_000);
        expect(records[0]!.settledAt).toBeLessThanOrEqual(after + 1_000);
        expect(records[1]!.attempts).toEqual([]);
        expect(records[1]!.settledAt).toBeUndefined();
        expect(await first.find('y')).toMatchObject({ delivery: delivery('y'), state: 'delivered', attempts: [answer(1, 200)] });
        expect(await first.lookup('m-nothing')).toEqual([]);
        expect(await first.find('nothing')).toBeUndefined();

        const { second } = await reopen(first);
        expect(await second.lookup('m-x')).toEqual(records);
        expect((await second.find('x-again'))?.state).toBe('pending');
      });

      it('recovers, once, the deliveries of a source given up within a window: the new ones recorded with their targets, the originals never again', async () => {
        const first = store();
        await first.open();
        const app = { ...delivery('app'), source: 'app' };
        await first.accept([delivery('early'), delivery('a'), delivery('b'), app, delivery('ok'), delivery('late')]);
        const held = new Map((await due(first)).map((claimed) => [claimed.delivery.id, claimed]));
        const settle = (id: string, outcome: 'delivered' | 'failed') => first.settle(held.get(id)!, outcome, [answer(1, 500, 'the receiver answered 500')]);
        await settle('early', 'failed');
        await sleep(30);
        const since = Date.now();
        await Promise.all([settle('a', 'failed'), settle('b', 'failed'), settle('app', 'failed'), settle('ok', 'delivered')]);
        await sleep(30);
        const until = Date.now();
        await sleep(30);
        await settle('late', 'failed');
        const query = { source: 'web', since, until };
        const again = (record: { delivery: Delivery }): Delivery => ({ ...record.delivery, id: `${record.delivery.id}-again`, targets: [1] });

        // Declined ones are left for a later recovery.
        const onlyA = await first.recover(query, (record) => (record.delivery.id === 'a' ? again(record) : undefined), { claim: 1, lease: 60_000 });
        expect(onlyA.recorded.map(({ id }) => id)).toEqual(['a-again']);
        expect(onlyA.claimed.map((claimed) => [claimed.delivery.id, claimed.targets])).toEqual([['a-again', [1]]]);
        const [one, two] = await Promise.all([first.recover(query, again), first.recover(query, again)]);
        expect([...one.recorded, ...two.recorded].map(({ id }) => id)).toEqual(['b-again']);
        expect((await first.recover({ source: 'web', since: 0, until: Date.now() + 1_000 }, again)).recorded.map(({ id }) => id).sort()).toEqual(['early-again', 'late-again']);
        expect((await first.recover({ source: 'web', since: 0, until: Date.now() + 1_000 }, again)).recorded).toEqual([]);
        // What a collector does with the claims it holds when it stops.
        await first.release(onlyA.claimed);

        const { second } = await reopen(first);
        expect((await second.recover({ source: 'web', since: 0, until: Date.now() + 1_000 }, again)).recorded).toEqual([]);
        const handed = await due(second);
        expect(handed.map((claimed) => [claimed.delivery.id, claimed.targets]).sort()).toEqual([
          ['a-again', [1]],
          ['b-again', [1]],
          ['early-again', [1]],
          ['late-again', [1]],
        ]);
        expect((await second.find('b-again'))?.delivery.webhook).toEqual(delivery('b').webhook);
      });
    });

    it('rejects every call after close with ERR_STORE_CLOSED; close is idempotent', async () => {
      const first = store();
      await first.open();
      const [held] = await first.accept([delivery('a')], { claim: 1, lease: 60_000 });
      await first.release([held!]);
      await Promise.all([first.close(), first.close()]);
      const closed = { code: 'ERR_STORE_CLOSED' };
      await expect(first.accept([delivery('late')])).rejects.toMatchObject(closed);
      await expect(first.settle(held!, 'delivered')).rejects.toMatchObject(closed);
      await expect(first.retry(held!, 0, [0])).rejects.toMatchObject(closed);
      await expect(first.claim(1, 1_000)).rejects.toMatchObject(closed);
      await expect(first.syncAudience('web', 'A', () => ({ deliveries: [], state: { audience: 'A', members: [] } }))).rejects.toMatchObject(closed);
      await first.close();

      const second = store();
      await second.open();
      expect(ids(await due(second))).toEqual(['a']);
    });

    urlStatesContract(store);
  });
}
