// The `Store` contract: what the collector relies on from any store. Every implementation runs it
// (test/collector/journal.test.ts, test/collector/postgres-store.test.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Delivery, Store } from '../../src/collector/store.js';
import type { Message } from '../../src/message.js';
import { prepareWebhook } from '../../src/webhooks/prepared.js';

/** Where a store keeps its data: fresh and empty for each test. */
export interface StorePlace {
  /** A new store on this place's data, not yet opened: two made one after the other see the same data. */
  make(): Store;
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
    const store = (): Store => {
      const created = current.make();
      made.push(created);
      return created;
    };
    /** Closes `first` and opens a new store on the same data: what a restart recovers. */
    const reopen = async (first: Store) => {
      await first.close();
      const second = store();
      return { second, snapshot: await second.open() };
    };

    it('gives back, after a reopen, every accepted delivery in the order accepted, with its webhook as fixed at acceptance', async () => {
      const first = store();
      expect(await first.open()).toEqual({ pending: [], audiences: [] });
      await first.accept([delivery('a', 111), delivery('b', 222)]);
      await first.accept([delivery('c', 1_700_000_000_123)]);
      await first.accept([]);

      const { snapshot } = await reopen(first);
      expect(snapshot.pending).toEqual([delivery('a', 111), delivery('b', 222), delivery('c', 1_700_000_000_123)]);
    });

    it('forgets, after a reopen, what was settled, delivered or failed', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('a'), delivery('b'), delivery('c')]);
      await first.settle('b', 'delivered');
      await first.settle('c', 'failed');

      const { second, snapshot } = await reopen(first);
      expect(snapshot.pending.map((d) => d.id)).toEqual(['a']);
      await second.settle('a', 'delivered');
      expect((await reopen(second)).snapshot.pending).toEqual([]);
    });

    it('records every one of many concurrent settlements, each with its own outcome', async () => {
      const first = store();
      await first.open();
      const ids = Array.from({ length: 60 }, (_, i) => `s${i}`);
      await first.accept(ids.map((id) => delivery(id)));
      // Every third is left pending; the others settle at once, delivered or failed in turn.
      await Promise.all(ids.filter((_, i) => i % 3 !== 0).map((id, i) => first.settle(id, i % 2 ? 'failed' : 'delivered')));

      const { snapshot } = await reopen(first);
      expect(snapshot.pending.map((d) => d.id)).toEqual(ids.filter((_, i) => i % 3 === 0));
    });

    it('gives back the body bytes exactly: non-ASCII, escapes, NUL and a lone surrogate', async () => {
      const tricky = { text: 'Café ☕ 日本 👩‍💻', quotes: '"q" \\ \\u0041 / \b\f\n\r\t', nul: 'a\u0000b', lone: 'x\ud800y', big: 1e21, small: 5e-7 };
      const original = delivery('bytes', 5_000, tricky);
      const first = store();
      await first.open();
      await first.accept([original]);

      const { snapshot } = await reopen(first);
      const [back] = snapshot.pending;
      expect(Buffer.from(back!.webhook.body).equals(Buffer.from(original.webhook.body))).toBe(true);
      expect(back!.webhook.body).toBe(original.webhook.body);
      expect(back!.message).toEqual(original.message);
    });

    it('keeps the latest state of each audience, per source, in memory and across a reopen', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('x')], { source: 'web', state: { audience: 'Power Users', members: ['u1'] } });
      await first.accept([], { source: 'web', state: { audience: 'Power Users', members: ['u1', 'u2'] } });
      await first.accept([], { source: 'app', state: { audience: 'Power Users', members: [] } });
      expect(first.audience('web', 'Power Users')).toEqual({ audience: 'Power Users', members: ['u1', 'u2'] });
      expect(first.audience('web', 'Other')).toBeUndefined();

      const { second, snapshot } = await reopen(first);
      expect(snapshot.audiences).toHaveLength(2);
      expect(snapshot.pending.map((d) => d.id)).toEqual(['x']);
      expect(second.audience('web', 'Power Users')).toEqual({ audience: 'Power Users', members: ['u1', 'u2'] });
      expect(second.audience('app', 'Power Users')).toEqual({ audience: 'Power Users', members: [] });
    });

    it('records an acceptance all or nothing: one it refuses leaves neither its deliveries nor its audience', async () => {
      const first = store();
      await first.open();
      await first.accept([], { source: 'web', state: { audience: 'A', members: ['u1'] } });
      // A BigInt cannot be stored as JSON: the second delivery fails the whole acceptance.
      const unstorable = { ...delivery('bad'), message: { ...message('bad'), properties: { n: 1n } } } as unknown as Delivery;
      await expect(first.accept([delivery('good'), unstorable], { source: 'web', state: { audience: 'A', members: ['u2'] } })).rejects.toThrow();
      expect(first.audience('web', 'A')?.members).toEqual(['u1']);

      const { second, snapshot } = await reopen(first);
      expect(snapshot.pending).toEqual([]);
      expect(second.audience('web', 'A')?.members).toEqual(['u1']);
    });

    it('keeps every one of many concurrent acceptances', async () => {
      const first = store();
      await first.open();
      const ids = Array.from({ length: 50 }, (_, i) => `c${i}`);
      await Promise.all(ids.map((id) => first.accept([delivery(id)])));

      const { snapshot } = await reopen(first);
      expect(snapshot.pending.map((d) => d.id).sort()).toEqual([...ids].sort());
    });

    it('rejects accept and settle after close with ERR_STORE_CLOSED; close is idempotent', async () => {
      const first = store();
      await first.open();
      await first.accept([delivery('a')]);
      await Promise.all([first.close(), first.close()]);
      await expect(first.accept([delivery('late')])).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
      await expect(first.settle('a', 'delivered')).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
      await first.close();

      const second = store();
      expect((await second.open()).pending.map((d) => d.id)).toEqual(['a']);
    });
  });
}
