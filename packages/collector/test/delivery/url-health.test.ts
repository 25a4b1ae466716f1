// When a webhook URL counts as failing and disabled: time logic under a fake clock, against a real
// journal store (its URL states file), across a "restart" (a second UrlHealth on the same store).
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { HttpError } from 'batched-analytics/internal';
import { DeliveryEmitter } from '../../src/delivery/events.js';
import { JournalStore } from '../../src/delivery/journal/store.js';
import { FAILING_ALERT_EVERY, UrlHealth } from '../../src/delivery/url-health.js';
import { tempDir } from '../../../../test/helpers/collector.js';
import { Reporter } from '../../src/config/report.js';
import { recordingLogger } from '../observe/recording-logger.js';

const temp = tempDir();
const stores: JournalStore[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(stores.splice(0).map((store) => store.close()));
});
afterAll(() => temp.remove());

const URL = 'https://hooks.example.com/in?token=s3cret';
const failure = (messageId: string) => ({ ok: false, messageId, status: 500, error: new HttpError(500, 'Internal Server Error') });

async function setUp(failing: { disableAfter: number; failingAfter: number }) {
  const store = new JournalStore(`${temp.dir}/${Math.random().toString(36).slice(2)}`);
  await store.open();
  stores.push(store);
  const events = new DeliveryEmitter();
  const told: { type: string; payload: any }[] = [];
  for (const type of ['urlFailing', 'urlDisabled', 'urlEnabled'] as const) events.on(type, (payload) => told.push({ type, payload }));
  const make = () => new UrlHealth({ store, events, failing, report: new Reporter(recordingLogger()) });
  return { store, told, make };
}

/** Each failure, and the store change it may start, before the next: as attempts come one after another. */
async function fail(health: UrlHealth, store: JournalStore, times: number, from = 0): Promise<void> {
  for (let n = 0; n < times; n++) {
    health.attempted('web', URL, failure(`m-${from + n}`));
    // The journal reads back once what was changed before is written; then the health keeps it.
    await store.urlStates();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('UrlHealth', () => {
  it('tells endpoint.failing after failingAfter failures in a row, at most once an hour per URL, also across a restart', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 1_000_000 });
    const { store, told, make } = await setUp({ disableAfter: 10 * FAILING_ALERT_EVERY, failingAfter: 3 });
    const health = make();
    await health.refresh();
    await fail(health, store, 2);
    expect(told).toEqual([]);
    await fail(health, store, 5, 2);
    expect(told.map(({ type }) => type)).toEqual(['urlFailing']);
    expect(told[0]!.payload).toMatchObject({ failures: 3, messageId: 'm-2', state: { source: 'web', url: URL, failingSince: 1_000_000, lastStatus: 500 } });

    // A restart within the hour: its count starts again, and the hour still holds.
    vi.setSystemTime(1_000_000 + FAILING_ALERT_EVERY - 60_000);
    const restarted = make();
    await restarted.refresh();
    await fail(restarted, store, 5);
    expect(told).toHaveLength(1);
    vi.setSystemTime(1_000_000 + FAILING_ALERT_EVERY + 1);
    await fail(restarted, store, 1);
    expect(told.map(({ type }) => type)).toEqual(['urlFailing', 'urlFailing']);

    // A success ends the run: it has to fail failingAfter times again (and wait out the hour) to be told of again.
    restarted.attempted('web', URL, { ok: true, messageId: 'ok' });
    await store.urlStates();
    await new Promise((resolve) => setImmediate(resolve));
    expect(restarted.states()).toEqual([expect.not.objectContaining({ failingSince: expect.anything() })]);
  });

  it('counts each URL of a source apart: a success at one neither ends nor restarts the other\'s run of failures', async () => {
    const { store, told, make } = await setUp({ disableAfter: 10 * FAILING_ALERT_EVERY, failingAfter: 3 });
    const health = make();
    await health.refresh();
    const OTHER = 'https://other.example.com/in';
    const succeed = async (url: string) => {
      health.attempted('web', url, { ok: true, messageId: 'ok' });
      await store.urlStates();
      await new Promise((resolve) => setImmediate(resolve));
    };
    await fail(health, store, 2);
    await succeed(OTHER);
    await fail(health, store, 1, 2);
    expect(told.map(({ type, payload }) => [type, payload.state.url, payload.failures])).toEqual([['urlFailing', URL, 3]]);

    // While URL fails, successes at the other leave its state; one at URL itself ends it.
    await succeed(OTHER);
    expect(health.states()).toEqual([expect.objectContaining({ url: URL, failingSince: expect.any(Number) })]);
    await succeed(URL);
    expect(health.states()).toEqual([expect.not.objectContaining({ failingSince: expect.anything() })]);
    // Its count started again: two more failures are not yet a run of three.
    await fail(health, store, 2, 3);
    expect(told).toHaveLength(1);
  });

  it('with failingAfter 1, tells endpoint.failing on the first failure', async () => {
    const { store, told, make } = await setUp({ disableAfter: FAILING_ALERT_EVERY, failingAfter: 1 });
    const health = make();
    await health.refresh();
    await fail(health, store, 1);
    expect(told).toEqual([{ type: 'urlFailing', payload: { failures: 1, messageId: 'm-0', state: expect.objectContaining({ failingSince: expect.any(Number), lastStatus: 500 }) } }]);
  });

  it('disables a URL whose attempts have all failed for disableAfter, once, and keeps it so across a restart until it is enabled', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 5_000_000 });
    const { store, told, make } = await setUp({ disableAfter: 60_000, failingAfter: 1_000 });
    const health = make();
    await health.refresh();
    await fail(health, store, 1);
    vi.setSystemTime(5_000_000 + 59_999);
    await fail(health, store, 1, 1);
    expect(health.isDisabled('web', URL)).toBe(false);
    expect(health.affects('web')).toBe(false);
    vi.setSystemTime(5_000_000 + 60_000);
    await fail(health, store, 3, 2);
    expect(health.isDisabled('web', URL)).toBe(true);
    expect(health.affects('web')).toBe(true);
    expect(told).toEqual([{ type: 'urlDisabled', payload: { messageId: 'm-2', state: { source: 'web', url: URL, failingSince: 5_000_000, disabledAt: 5_060_000, lastStatus: 500 } } }]);

    const restarted = make();
    expect(restarted.isDisabled('web', URL)).toBe(false);
    await restarted.refresh();
    expect(restarted.isDisabled('web', URL)).toBe(true);
    // Another URL of the source is not.
    expect(restarted.isDisabled('web', 'https://other.example.com/in')).toBe(false);

    vi.setSystemTime(5_100_000);
    expect(await restarted.enable('web', URL)).toEqual({ source: 'web', url: URL, enabledAt: 5_100_000, lastStatus: 500 });
    expect(restarted.isDisabled('web', URL)).toBe(false);
    expect(restarted.enabledAt('web', URL)).toBe(5_100_000);
    expect(told.at(-1)).toMatchObject({ type: 'urlEnabled', payload: { disabledAt: 5_060_000, state: { enabledAt: 5_100_000 } } });
    expect(await restarted.enable('web', URL)).toBeUndefined();
    // The first process learns it from the store on its next read, and says it was enabled there.
    expect(await health.refresh()).toEqual([expect.objectContaining({ source: 'web', url: URL, enabledAt: 5_100_000 })]);
    expect(health.isDisabled('web', URL)).toBe(false);
  });

  it('never watches the collector\'s own alert URL', async () => {
    const { told, make } = await setUp({ disableAfter: 1, failingAfter: 1 });
    const health = make();
    for (let n = 0; n < 3; n++) {
      health.attempted('@alerts', URL, failure(`a-${n}`));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(told).toEqual([]);
    expect(health.states()).toEqual([]);
  });
});
