// What the collector adds to each message it accepts (receivedAt, originalTimestamp, a corrected
// timestamp, context.ip, a batch's context and integrations), on the raw HTTP API of the real CLI:
// the webhook and the live page carry the same fields.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, type StreamedEvent, waitFor, watchEvents } from '../../../../test/helpers/collector.js';
import { send, type SourcesFixture, startSources } from '../../../../test/helpers/sources.js';

/** The one proxy the collector believes: requests can leave from any 127/8 address. */
const PROXY = '127.0.0.2';
const HOUR = 3_600_000;

let fixture: SourcesFixture;
let events: Awaited<ReturnType<typeof watchEvents>>;

beforeAll(async () => {
  fixture = await startSources([{ name: 'web', writeKey: 'wk_web' }], { trustProxy: [PROXY, '10.0.0.0/8'] });
  events = await watchEvents(fixture.collector.url);
});

afterAll(async () => {
  events?.close();
  await fixture?.close();
});

const auth = { authorization: basic('wk_web') };
const batch = (body: Record<string, unknown>, options: Parameters<typeof send>[2] = {}) =>
  send(`${fixture.collector.url}/v1/batch`, body, { ...options, headers: { ...auth, ...options.headers } });
const track = (extra: Record<string, unknown> = {}): Record<string, unknown> & { messageId: string } => ({ type: 'track', event: 'Enriched', userId: 'u', messageId: randomUUID(), ...extra });
const browser = { library: { name: 'analytics.js', version: 'npm:next-1.84.3' } };
const ms = (iso: string) => Date.parse(iso);

async function shown(messageId: string): Promise<StreamedEvent> {
  const find = () => [...events.latest.values()].find((event) => event.message.messageId === messageId);
  await waitFor(() => find() !== undefined, `the page's event ${messageId}`);
  return find()!;
}

describe('timestamps', () => {
  it('corrects a clock one hour fast: timestamp = receivedAt - (sentAt - originalTimestamp), the time sent kept as originalTimestamp', async () => {
    const fast = Date.now() + HOUR;
    // Happened 5 s before it was sent, by the device's clock.
    const message = track({ timestamp: new Date(fast - 5_000).toISOString() });
    const before = Date.now();
    expect((await batch({ batch: [message], sentAt: new Date(fast).toISOString() })).status).toBe(200);
    const body = await fixture.webhookOf(message.messageId);
    expect(ms(body.receivedAt)).toBeGreaterThanOrEqual(before);
    expect(ms(body.receivedAt)).toBeLessThanOrEqual(Date.now());
    expect(body.timestamp).toBe(new Date(ms(body.receivedAt) - 5_000).toISOString());
    expect(body.originalTimestamp).toBe(message.timestamp);
    // The batch's sentAt is not copied into each message.
    expect('sentAt' in body).toBe(false);
  });

  it('takes the message\'s own sentAt over the batch\'s', async () => {
    const sentAt = new Date(Date.now() + HOUR).toISOString();
    const message = track({ timestamp: new Date(ms(sentAt) - 2_000).toISOString(), sentAt });
    expect((await batch({ batch: [message], sentAt: new Date(Date.now() - HOUR).toISOString() })).status).toBe(200);
    const body = await fixture.webhookOf(message.messageId);
    expect(body.timestamp).toBe(new Date(ms(body.receivedAt) - 2_000).toISOString());
    expect(body.sentAt).toBe(sentAt);
  });

  it('keeps a historical import\'s timestamps, sent with a true sentAt, to within the time in transit', async () => {
    const message = track({ timestamp: '2019-03-01T12:00:00.000Z' });
    const sentAt = new Date().toISOString();
    expect((await batch({ batch: [message], sentAt })).status).toBe(200);
    const body = await fixture.webhookOf(message.messageId);
    expect(body.originalTimestamp).toBe('2019-03-01T12:00:00.000Z');
    const transit = ms(body.receivedAt) - ms(sentAt);
    expect(ms(body.timestamp) - ms('2019-03-01T12:00:00.000Z')).toBe(transit);
    expect(transit).toBeLessThan(10_000);
  });

  it('keeps the timestamp as sent without sentAt, and uses receivedAt when none was sent', async () => {
    const kept = track({ timestamp: '2019-03-01T12:00:00Z' });
    const unstamped = track();
    expect((await batch({ batch: [kept, unstamped] })).status).toBe(200);
    expect(await fixture.webhookOf(kept.messageId)).toMatchObject({ timestamp: '2019-03-01T12:00:00.000Z', originalTimestamp: '2019-03-01T12:00:00.000Z' });
    const body = await fixture.webhookOf(unstamped.messageId);
    expect(body.timestamp).toBe(body.receivedAt);
    expect('originalTimestamp' in body).toBe(false);
    expect('sentAt' in body).toBe(false);
  });

  it.each([
    [{ sentAt: 'yesterday' }, 'sentAt'],
    [{ sentAt: 5 }, 'sentAt'],
  ])('refuses a batch whose %j is not a date, naming %s', async (extra, field) => {
    const answer = await batch({ batch: [track({ timestamp: new Date().toISOString() })], ...extra });
    expect(answer).toMatchObject({ status: 400, body: { field } });
  });

  it.each([
    [{ timestamp: '1' }, 'batch[1].timestamp'],
    [{ timestamp: 'foo 2' }, 'batch[1].timestamp'],
    [{ timestamp: '2026-02-31T00:00:00Z' }, 'batch[1].timestamp'],
    [{ timestamp: '2026-12-01T00:00:00Z', sentAt: '7' }, 'batch[1].sentAt'],
    [{ timestamp: '2026-12-01T00:00:00Z', sentAt: '2026-12-01T00:00:00+1' }, 'batch[1].sentAt'],
  ])('refuses a message whose %j is not an ISO 8601 date, naming %s, and accepts none of its batch', async (extra, field) => {
    const first = track();
    const answer = await batch({ batch: [first, track(extra)] });
    expect(answer).toMatchObject({ status: 400, body: { field } });
    expect(answer.body.error).toMatch(/ISO 8601/);
    const single = await send(`${fixture.collector.url}/v1/track`, track(extra), { headers: auth });
    expect(single).toMatchObject({ status: 400, body: { field: field.replace('batch[1].', '') } });
    expect(fixture.bodies().some((body) => body.messageId === first.messageId)).toBe(false);
  });

  it.each(['7', '2026-02-31T00:00:00Z', '2026-12-01 10:00:00 UTC'])('refuses a batch whose sentAt is %j, naming sentAt', async (sentAt) => {
    const answer = await batch({ batch: [track({ timestamp: new Date().toISOString() })], sentAt });
    expect(answer).toMatchObject({ status: 400, body: { field: 'sentAt' } });
  });

  it('reads an offset, a time without one and a date alone as the instant they name, reading the last two as UTC', async () => {
    const offset = track({ timestamp: '2026-01-01T09:00:00+09:00' });
    const naive = track({ timestamp: '2026-01-01T00:00:00' });
    const day = track({ timestamp: '2026-01-01' });
    expect((await batch({ batch: [offset, naive, day] })).status).toBe(200);
    for (const { messageId } of [offset, naive, day]) expect(await fixture.webhookOf(messageId)).toMatchObject({ timestamp: '2026-01-01T00:00:00.000Z' });
  });

  it('refuses a message whose own sentAt is not a date, naming it', async () => {
    const answer = await batch({ batch: [track(), track({ sentAt: 'soon' })] });
    expect(answer).toMatchObject({ status: 400, body: { field: 'batch[1].sentAt' } });
  });
});

describe('context.ip', () => {
  it('is the socket\'s address for analytics.js and the mobile libraries, and for any message with context.direct', async () => {
    const messages = [
      track({ context: browser }),
      track({ context: { library: { name: 'analytics-ios', version: '4.1.8' } } }),
      track({ context: { library: { name: 'analytics-kotlin', version: '1.16.0' } } }),
      track({ context: { library: { name: 'analytics-node', version: '2.1.0' }, direct: true } }),
    ];
    expect((await batch({ batch: messages }, { localAddress: '127.0.0.3' })).status).toBe(200);
    for (const { messageId } of messages) expect((await fixture.webhookOf(messageId)).context.ip).toBe('127.0.0.3');
  });

  it('is not added for server libraries, nor over an ip the message has', async () => {
    const server = track({ context: { library: { name: 'analytics-node', version: '2.1.0' } } });
    const own = track({ context: { ...browser, ip: '198.51.100.4' } });
    const bare = track();
    expect((await batch({ batch: [server, own, bare] }, { localAddress: '127.0.0.3' })).status).toBe(200);
    expect('ip' in (await fixture.webhookOf(server.messageId)).context).toBe(false);
    expect((await fixture.webhookOf(own.messageId)).context.ip).toBe('198.51.100.4');
    expect('context' in (await fixture.webhookOf(bare.messageId))).toBe(false);
  });

  it('is taken from X-Forwarded-For when the peer is a trusted proxy: the nearest address that is not one', async () => {
    const direct = track({ context: browser });
    const chained = track({ context: browser });
    expect((await batch({ batch: [direct] }, { localAddress: PROXY, headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(200);
    // A client that forges the first entry, then an untrusted hop, then an inner proxy in 10/8.
    const forwarded = { 'x-forwarded-for': '192.0.2.1, 198.51.100.23, 10.1.2.3' };
    expect((await batch({ batch: [chained] }, { localAddress: PROXY, headers: forwarded })).status).toBe(200);
    expect((await fixture.webhookOf(direct.messageId)).context.ip).toBe('203.0.113.9');
    expect((await fixture.webhookOf(chained.messageId)).context.ip).toBe('198.51.100.23');
  });

  it('ignores X-Forwarded-For from a peer that is not trusted', async () => {
    const message = track({ context: browser });
    expect((await batch({ batch: [message] }, { localAddress: '127.0.0.4', headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(200);
    expect((await fixture.webhookOf(message.messageId)).context.ip).toBe('127.0.0.4');
  });
});

describe('context.ip over IPv6', () => {
  let v6: SourcesFixture;

  beforeAll(async () => {
    v6 = await startSources([{ name: 'web', writeKey: 'wk_web' }], { trustProxy: ['::1/128'] }, '::1');
  });

  afterAll(() => v6?.close());

  it('is the IPv6 peer\'s address, or what a trusted IPv6 proxy forwards, IPv4 written plainly', async () => {
    const direct = track({ context: browser });
    const forwarded = track({ context: browser });
    const mapped = track({ context: browser });
    const url = `${v6.collector.url}/v1/batch`;
    expect((await send(url, { batch: [direct] }, { headers: auth })).status).toBe(200);
    expect((await send(url, { batch: [forwarded] }, { headers: { ...auth, 'x-forwarded-for': '2001:db8::7' } })).status).toBe(200);
    expect((await send(url, { batch: [mapped] }, { headers: { ...auth, 'x-forwarded-for': '::ffff:203.0.113.9' } })).status).toBe(200);
    // The collector's own peer is ::1, which it trusts: its address stands when nothing is forwarded.
    expect((await v6.webhookOf(direct.messageId)).context.ip).toBe('::1');
    expect((await v6.webhookOf(forwarded.messageId)).context.ip).toBe('2001:db8::7');
    expect((await v6.webhookOf(mapped.messageId)).context.ip).toBe('203.0.113.9');
  });
});

describe('a batch\'s own context and integrations', () => {
  it('go under each message\'s keys, the message\'s winning', async () => {
    const plain = track();
    const own = track({ context: { locale: 'fr-FR', ip: '198.51.100.4' } });
    const context = { locale: 'de-DE', app: { name: 'Shop', version: '2.0' } };
    expect((await batch({ batch: [plain, own], context })).status).toBe(200);
    expect((await fixture.webhookOf(plain.messageId)).context).toEqual(context);
    expect((await fixture.webhookOf(own.messageId)).context).toEqual({ locale: 'fr-FR', ip: '198.51.100.4', app: { name: 'Shop', version: '2.0' } });
  });

  it('`integrations: { Webhooks: false }` on the batch stops forwarding, unless a message turns it on again', async () => {
    const off = track();
    const on = track({ integrations: { Webhooks: true } });
    expect((await batch({ batch: [off, on], integrations: { Webhooks: false } })).status).toBe(200);
    await fixture.webhookOf(on.messageId);
    expect((await shown(off.messageId)).routes).toEqual([{ destination: 'Webhooks', forwarded: false, reason: 'disabled by the message\'s integrations' }]);
    expect(fixture.bodies().filter((body) => body.messageId === off.messageId)).toEqual([]);
  });

  it.each([
    [{ context: 'mobile' }, 'context'],
    [{ integrations: [] }, 'integrations'],
    [{ integrations: { Webhooks: 'no' } }, 'integrations.Webhooks'],
  ])('refuses a batch with %j, naming %s', async (extra, field) => {
    expect(await batch({ batch: [track()], ...extra })).toMatchObject({ status: 400, body: { field } });
  });
});

it('the page shows the message with the fields the webhook carries', async () => {
  const message = track({ context: browser, timestamp: new Date(Date.now() + HOUR - 1_000).toISOString() });
  expect((await batch({ batch: [message], sentAt: new Date(Date.now() + HOUR).toISOString() }, { localAddress: '127.0.0.5' })).status).toBe(200);
  const body = await fixture.webhookOf(message.messageId);
  // The list shows its outline; the detail view, the whole message as the store keeps it.
  const { id } = await shown(message.messageId);
  const detail = (await (await fetch(`${fixture.collector.url}/events/${id}`)).json()) as { event: StreamedEvent };
  const onPage = detail.event.message;
  for (const field of ['receivedAt', 'timestamp', 'originalTimestamp'] as const) expect(onPage[field]).toBe(body[field]);
  expect(onPage.context).toEqual(body.context);
  expect(body.context.ip).toBe('127.0.0.5');
});
