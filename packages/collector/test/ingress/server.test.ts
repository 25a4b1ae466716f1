// The collector's HTTP API, through the real CLI (`node dist/cli.js serve`) and real receivers.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Analytics } from 'batched-analytics';
import { verifySignature } from 'batched-analytics/webhooks';
import {
  basic,
  type Collector,
  postJson,
  startCollector,
  stopAll,
  type StreamedEvent,
  tempDir,
  waitFor,
  watchEvents,
  writeConfig,
} from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

const SECRET = 's3cret';
const ADMIN = 'admin-secret-0123456789';
let hookA: Loopback;
let hookB: Loopback;
let hookC: Loopback;
let flaky: Loopback;
let slow: Loopback;
/** Requests the slow receiver is answering right now, and the most at once. */
const slowLoad = { now: 0, peak: 0 };
let collector: Collector;
let events: Awaited<ReturnType<typeof watchEvents>>;
const temp = tempDir();

beforeAll(async () => {
  [hookA, hookB, hookC] = await Promise.all([startLoopback(), startLoopback(), startLoopback()]);
  // Answers 503 twice, then 200; 400 for anything whose body mentions "refuse".
  flaky = await startLoopback((req, res) => {
    if (req.body.includes('refuse')) res.writeHead(400).end('no');
    else res.writeHead(flaky.requests.filter((r) => r.body === req.body).length <= 2 ? 503 : 200).end();
  });
  slow = await startLoopback((_, res) => {
    slowLoad.now += 1;
    slowLoad.peak = Math.max(slowLoad.peak, slowLoad.now);
    setTimeout(() => {
      slowLoad.now -= 1;
      res.end();
    }, 50);
  });
  const config = writeConfig(temp.dir, {
    adminToken: ADMIN,
    sources: [
      {
        name: 'web',
        writeKey: 'wk_web',
        destinations: { Webhooks: { webhooks: [{ url: `${hookA.url}/in`, headers: { 'X-Env': 'dev' } }, { url: `${hookB.url}/b` }], sharedSecret: SECRET } },
      },
      { name: 'app', writeKey: 'wk_app', destinations: { Webhooks: { webhooks: [{ url: `${hookC.url}/c` }] } } },
      { name: 'server', writeKey: 'wk_srv' },
      { name: 'flaky', writeKey: 'wk_flaky', destinations: { Webhooks: { webhooks: [{ url: flaky.url }] } } },
      { name: 'slow', writeKey: 'wk_slow', destinations: { Webhooks: { webhooks: [{ url: slow.url }] } } },
    ],
    delivery: { minRetryDelay: 10, maxRetryDelay: 20 },
  });
  collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
  events = await watchEvents(collector.url);
});

afterAll(async () => {
  events?.close();
  await stopAll();
  await Promise.all([hookA, hookB, hookC, flaky, slow].map((hook) => hook?.close()));
  temp.remove();
});

const bodies = (hook: Loopback) => hook.requests.map((r) => JSON.parse(r.body) as Record<string, any>);
const received = (hook: Loopback, match: (body: Record<string, any>) => boolean) => bodies(hook).filter(match);
const streamed = (match: (e: StreamedEvent) => boolean) => [...events.latest.values()].filter(match);
const post = (route: string, body: unknown, writeKey?: string) =>
  postJson(`${collector.url}${route}`, body, writeKey === undefined ? {} : { authorization: basic(writeKey) });

/**
 * Proves a refused request left no trace: a request sent after it is accepted and streamed, and the
 * refused one's marker is in neither the stream nor any receiver.
 */
async function expectNothingAccepted(marker: string): Promise<void> {
  const after = `after-${marker}`;
  expect((await post('/v1/track', { userId: 'u', event: after }, 'wk_web')).status).toBe(200);
  await waitFor(() => received(hookA, (b) => b.event === after).length === 1, `${after} at hook A`);
  const seen = (text: string) => text.includes(marker) && !text.includes(after);
  expect(streamed((e) => seen(JSON.stringify(e.message)))).toEqual([]);
  expect([hookA, hookB, hookC].flatMap((hook) => hook.requests).filter((r) => seen(r.body))).toEqual([]);
}

describe('ingestion from the client', () => {
  it('forwards each call type to every webhook of the source, in the spec shape, signed, with the static headers', async () => {
    const analytics = new Analytics('wk_web', { endpoint: collector.url, flushAt: 6 });
    const userId = 'call-types';
    analytics.identify({ userId, traits: { name: 'Ada', age: 36 } });
    analytics.track({ userId, event: 'Order Completed', properties: { total: 30 } });
    analytics.page({ userId, name: 'Checkout', properties: { path: '/checkout', title: 'Checkout' } });
    analytics.screen({ userId, name: 'Home' });
    analytics.group({ userId, groupId: 'acme', traits: { plan: 'pro' } });
    analytics.alias({ userId, previousId: 'anon-1' });
    expect(await analytics.close()).toEqual({ delivered: 6, failed: 0, dropped: 0 });

    const ours = (b: Record<string, any>) => b.userId === userId || b['User ID'] === userId;
    await waitFor(() => received(hookA, ours).length === 6 && received(hookB, ours).length === 6, 'six webhooks at A and B');
    const byType = Object.fromEntries(received(hookA, ours).map((b) => [b.type, b]));
    const iso = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The client sends each batch with its `sentAt`: the collector keeps the call's own time as `originalTimestamp`.
    const common = { version: 1, timestamp: iso, context: expect.any(Object), messageId: expect.any(String), originalTimestamp: iso, receivedAt: iso };
    expect(byType).toEqual({
      identify: { ...common, type: 'identify', userId, traits: { name: 'Ada', age: 36 } },
      track: { ...common, type: 'track', userId, event: 'Order Completed', properties: { total: 30 } },
      page: { ...common, type: 'page', userId, properties: { path: '/checkout', title: 'Checkout' }, name: 'Checkout' },
      screen: { ...common, type: 'screen', userId, name: 'Home', properties: {} },
      group: { ...common, type: 'group', userId, groupId: 'acme', traits: { plan: 'pro' } },
      alias: { ...common, type: 'alias', 'Previous ID': 'anon-1', 'User ID': userId },
    });
    for (const request of hookA.requests.filter((r) => ours(JSON.parse(r.body)))) {
      expect(request.url).toBe('/in');
      expect(request.headers['x-env']).toBe('dev');
      expect(request.headers['user-agent']).toMatch(/\/1\.0$/);
      expect(verifySignature(request.body, request.headers['x-signature'] as string, SECRET)).toBe(true);
    }
    expect(hookB.requests.filter((r) => ours(JSON.parse(r.body))).every((r) => r.headers['x-env'] === undefined)).toBe(true);
    expect(received(hookC, ours)).toEqual([]);
  });

  it('accepts gzip bodies', async () => {
    const analytics = new Analytics('wk_web', { endpoint: collector.url, gzip: true });
    analytics.track({ userId: 'gz', event: 'Zipped' });
    expect(await analytics.close()).toMatchObject({ delivered: 1 });
    await waitFor(() => received(hookA, (b) => b.event === 'Zipped').length === 1, 'the gzip message at A');
  });

  it.each(['identify', 'track', 'page', 'screen', 'group', 'alias'])('accepts a single %s on its own route, type optional', async (type) => {
    const userId = `single-${type}`;
    const body = { userId, event: 'Single', groupId: 'g1', previousId: 'p1', messageId: `m-${type}` };
    const res = await post(`/v1/${type}`, body, 'wk_web');
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    await waitFor(() => received(hookA, (b) => (b.userId ?? b['User ID']) === userId && b.type === type).length === 1, `the ${type} at A`);
  });

  it('refuses a single call whose type contradicts its route', async () => {
    const res = await post('/v1/track', { type: 'identify', userId: 'u', event: 'contradiction' }, 'wk_web');
    expect(res).toMatchObject({ status: 400, body: { code: 'ERR_VALIDATION', field: 'type' } });
    await expectNothingAccepted('contradiction');
  });
});

describe('refusals', () => {
  it('401 without a write key or with an unknown one, asking for basic auth', async () => {
    const none = await post('/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'no-key' }] });
    expect(none).toMatchObject({ status: 401, body: { code: 'ERR_UNAUTHORIZED' } });
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic /);
    const unknown = await post('/v1/track', { userId: 'u', event: 'no-key' }, 'wk_nope');
    expect(unknown).toMatchObject({ status: 401, body: { code: 'ERR_UNAUTHORIZED' } });
    await expectNothingAccepted('no-key');
  });

  it('400 for a body that is not JSON', async () => {
    const res = await post('/v1/batch', '{"batch": [', 'wk_web');
    expect(res).toMatchObject({ status: 400, body: { code: 'ERR_INVALID_JSON' } });
  });

  it('400 naming the field of an invalid message, and the whole batch is refused', async () => {
    const res = await post('/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'half-batch' }, { type: 'track', event: 'half-batch' }] }, 'wk_web');
    expect(res).toMatchObject({ status: 400, body: { code: 'ERR_VALIDATION', field: 'batch[1].userId', error: expect.stringContaining('userId') } });
    const wrongType = await post('/v1/batch', { batch: [{ type: 'purchase', userId: 'u' }] }, 'wk_web');
    expect(wrongType.body).toMatchObject({ field: 'batch[0].type' });
    expect((await post('/v1/batch', { messages: [] }, 'wk_web')).body).toMatchObject({ field: 'batch' });
    expect((await post('/v1/identify', { userId: 'u', traits: [1] }, 'wk_web')).body).toMatchObject({ field: 'traits' });
    await expectNothingAccepted('half-batch');
  });

  it('400 for a message over 32,000 bytes, even inside a small enough batch', async () => {
    const big = { type: 'track', userId: 'u', event: 'too-big', properties: { blob: 'x'.repeat(32_000) } };
    const batch = await post('/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'too-big' }, big] }, 'wk_web');
    expect(batch).toMatchObject({ status: 400, body: { code: 'ERR_MESSAGE_TOO_LARGE', field: 'batch[1]' } });
    expect((await post('/v1/track', big, 'wk_web')).status).toBe(400);
    await expectNothingAccepted('too-big');
  });

  it('413 for a body over 500,000 bytes, answered without reading the rest', async () => {
    // Declares 600,000 bytes but sends 1,000 and waits: the answer can only come from the header.
    const declared = await rawPost({ 'content-length': '600000' }, ['x'.repeat(1_000)]);
    expect(declared).toMatchObject({ status: 413 });
    expect(JSON.parse(declared.body)).toMatchObject({ code: 'ERR_BODY_TOO_LARGE' });
    // Chunked, no length: refused once 500,000 bytes have been read, though the client has more.
    const streamedBody = await rawPost({ 'transfer-encoding': 'chunked' }, Array.from({ length: 51 }, () => 'y'.repeat(10_000)));
    expect(streamedBody.status).toBe(413);
  });

  it('404 for an unknown route, 405 for a wrong method', async () => {
    expect((await post('/v2/batch', {}, 'wk_web')).status).toBe(404);
    const res = await fetch(`${collector.url}/v1/batch`);
    expect(res.status).toBe(405);
    // A browser's preflight (OPTIONS) is answered too: see cors.test.ts.
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
  });
});

describe('routing by source and integrations map', () => {
  it('sends to Webhooks unless the integrations map disables it (All rule, case-sensitive name)', async () => {
    const cases: Record<string, Record<string, unknown> | undefined> = {
      'route-default': undefined,
      'route-all-off': { All: false },
      'route-all-off-webhooks-on': { All: false, Webhooks: true },
      'route-webhooks-off': { Webhooks: false },
      'route-lowercase-off': { webhooks: false },
      'route-settings-object': { All: false, Webhooks: { note: 'settings leave it on' } },
    };
    const batch = Object.entries(cases).map(([event, integrations]) => ({ type: 'track', userId: 'r', event, ...(integrations ? { integrations } : {}) }));
    expect((await post('/v1/batch', { batch }, 'wk_web')).status).toBe(200);

    const forwarded = ['route-default', 'route-all-off-webhooks-on', 'route-lowercase-off', 'route-settings-object'];
    await waitFor(() => streamed((e) => e.message.event in cases).length === 6, 'six routed events');
    await waitFor(() => forwarded.every((event) => received(hookA, (b) => b.event === event).length === 1), 'the forwarded ones at A');
    const routing = Object.fromEntries(streamed((e) => e.message.event in cases).map((e) => [e.message.event, e.routes[0]!.forwarded]));
    expect(routing).toEqual({
      'route-default': true,
      'route-all-off': false,
      'route-all-off-webhooks-on': true,
      'route-webhooks-off': false,
      'route-lowercase-off': true,
      'route-settings-object': true,
    });
    expect(streamed((e) => e.message.event === 'route-all-off')[0]).toMatchObject({ webhooks: [], routes: [{ reason: expect.stringContaining('integrations') }] });
    expect(received(hookA, (b) => b.event === 'route-all-off' || b.event === 'route-webhooks-off')).toEqual([]);
  });

  it("sends a source's messages only to its own webhooks; a source without destinations accepts and forwards nothing", async () => {
    expect((await post('/v1/track', { userId: 'u', event: 'app-only' }, 'wk_app')).status).toBe(200);
    expect((await post('/v1/track', { userId: 'u', event: 'server-only' }, 'wk_srv')).status).toBe(200);
    await waitFor(() => received(hookC, (b) => b.event === 'app-only').length === 1, 'app-only at C');
    await waitFor(() => streamed((e) => e.message.event === 'server-only').length === 1, 'server-only in the stream');
    expect(streamed((e) => e.message.event === 'server-only')[0]).toMatchObject({
      source: 'server',
      routes: [{ destination: 'Webhooks', forwarded: false, reason: expect.stringContaining('no Webhooks destination') }],
    });
    expect(received(hookA, (b) => b.event === 'app-only' || b.event === 'server-only')).toEqual([]);
  });

  it('forwards an anonymous-only message with its anonymousId and no userId key', async () => {
    const sent = { anonymousId: 'anon', event: 'anonymous-only', messageId: 'm-anon', timestamp: '2024-05-01T00:00:00.000Z' };
    expect((await post('/v1/track', sent, 'wk_web')).status).toBe(200);
    await waitFor(() => received(hookA, (b) => b.event === 'anonymous-only').length === 1, 'the anonymous message at A');
    const body = hookA.requests.map((r) => r.body).find((raw) => raw.includes('"anonymous-only"'))!;
    expect(body).toMatch(/^\{"version":1,"type":"track","event":"anonymous-only","properties":\{\},"timestamp":"2024-05-01T00:00:00.000Z","messageId":"m-anon","anonymousId":"anon","originalTimestamp":"2024-05-01T00:00:00.000Z","receivedAt":"[^"]+"\}$/);
  });

  it('streams each webhook status: retrying while it answers 5xx, then delivered; failed on a 4xx', async () => {
    expect((await post('/v1/track', { userId: 'u', event: 'flaky-ok' }, 'wk_flaky')).status).toBe(200);
    expect((await post('/v1/track', { userId: 'u', event: 'refuse-me' }, 'wk_flaky')).status).toBe(200);
    await waitFor(() => streamed((e) => e.message.event === 'flaky-ok')[0]?.webhooks[0]?.status === 'delivered', 'flaky-ok delivered');
    expect(streamed((e) => e.message.event === 'flaky-ok')[0]!.webhooks[0]).toMatchObject({ status: 'delivered', attempts: 3, httpStatus: 200 });
    const history = events.all.filter((e) => e.message.event === 'flaky-ok').map((e) => e.webhooks[0]!.status);
    expect(history.filter((status, i) => status !== history[i - 1])).toEqual(['pending', 'retrying', 'delivered']);
    await waitFor(() => streamed((e) => e.message.event === 'refuse-me')[0]?.webhooks[0]?.status === 'failed', 'refuse-me failed');
    expect(streamed((e) => e.message.event === 'refuse-me')[0]!.webhooks[0]).toMatchObject({ attempts: 1, httpStatus: 400 });
  });
});

describe('backlogs', () => {
  it('sends at most 64 of a source\'s messages at once; the rest wait their turn', async () => {
    const batch = Array.from({ length: 300 }, (_, i) => ({ type: 'track', userId: 'u', event: 'Backlog', properties: { i } }));
    expect((await post('/v1/batch', { batch }, 'wk_slow')).status).toBe(200);
    await waitFor(() => slow.requests.filter((r) => r.body.includes('Backlog')).length === 300 && slowLoad.now === 0, 'the 300 messages at the slow receiver');
    // Without the bound all 300 would be in flight at once; under CPU load the peak may fall short of 64.
    expect(slowLoad.peak).toBeLessThanOrEqual(64);
    expect(slowLoad.peak).toBeGreaterThanOrEqual(32);
  });
});

describe('POST /v1/audiences', () => {
  const trait = (hook: Loopback, userPrefix: string) =>
    received(hook, (b) => b.type === 'identify' && String(b.userId).startsWith(userPrefix)).map((b) => [b.userId, b.traits.power_users]);

  it('sends an identify per member on the first sync, then only for changed memberships', async () => {
    const first = await post('/v1/audiences', { name: 'Power Users', userIds: ['aud-1', 'aud-2', 'aud-1'] }, 'wk_web');
    expect(first).toMatchObject({ status: 200, body: { trait: 'power_users', members: 2, joined: 2, left: 0 } });
    await waitFor(() => trait(hookA, 'aud-').length === 2, 'two identifies');
    expect(trait(hookA, 'aud-').sort()).toEqual([['aud-1', true], ['aud-2', true]]);

    const second = await post('/v1/audiences', { name: 'Power Users', userIds: ['aud-2', 'aud-3'] }, 'wk_web');
    expect(second.body).toMatchObject({ members: 2, joined: 1, left: 1 });
    await waitFor(() => trait(hookA, 'aud-').length === 4, 'two more identifies');
    expect(trait(hookA, 'aud-').slice(2).sort()).toEqual([['aud-1', false], ['aud-3', true]]);
    expect(received(hookA, (b) => b.userId === 'aud-1' && b.traits?.power_users === false)[0]).toMatchObject({ version: 1, type: 'identify' });

    const same = await post('/v1/audiences', { name: 'Power Users', userIds: ['aud-3', 'aud-2'] }, 'wk_web');
    expect(same.body).toMatchObject({ joined: 0, left: 0 });
    // Another source's audience of the same name is its own: a first sync.
    expect((await post('/v1/audiences', { name: 'Power Users', userIds: ['aud-2'] }, 'wk_app')).body).toMatchObject({ joined: 1 });
    await waitFor(() => trait(hookC, 'aud-').length === 1, 'the app identify at C');
    expect(trait(hookA, 'aud-')).toHaveLength(4);
  });

  it('refuses a bad request naming the field, and an unknown write key', async () => {
    expect((await post('/v1/audiences', { name: '', userIds: [] }, 'wk_web')).body).toMatchObject({ code: 'ERR_VALIDATION', field: 'name' });
    expect((await post('/v1/audiences', { name: '!!!', userIds: [] }, 'wk_web')).body).toMatchObject({
      field: 'name',
      error: 'Expected `name` to contain a letter or digit, got `"!!!"` (string)',
    });
    expect((await post('/v1/audiences', { name: 'A', userIds: 'u1' }, 'wk_web')).body).toMatchObject({ field: 'userIds' });
    expect((await post('/v1/audiences', { name: 'A', userIds: ['u1', 7] }, 'wk_web')).body).toMatchObject({
      field: 'userIds[1]',
      error: 'Expected `userIds[1]` to be a non-empty string, got `7` (number)',
    });
    expect((await post('/v1/audiences', [], 'wk_web')).status).toBe(400);
    expect((await post('/v1/audiences', { name: 'A', userIds: ['u1'] }, 'wk_nope')).status).toBe(401);
  });
});

describe('POST /v1/deletions', () => {
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('sends one delete notification per source with the Webhooks destination', async () => {
    const res = await postJson(`${collector.url}/v1/deletions`, { userId: 'gone-user' }, bearer(ADMIN));
    expect(res).toMatchObject({ status: 200, body: { notifications: 4, sources: ['web', 'app', 'flaky', 'slow'] } });
    const deleted = (hook: Loopback) => received(hook, (b) => b.type === 'delete' && b.userId === 'gone-user');
    await waitFor(() => deleted(hookA).length === 1 && deleted(hookB).length === 1 && deleted(hookC).length === 1, 'the deletes');
    expect(deleted(hookC)[0]).toEqual({ type: 'delete', userId: 'gone-user', timestamp: expect.stringMatching(/Z$/) });
    const signed = hookA.requests.find((r) => r.body.includes('gone-user'))!;
    expect(verifySignature(signed.body, signed.headers['x-signature'] as string, SECRET)).toBe(true);
  });

  it('401 without the admin token, or with a write key; 400 without a userId', async () => {
    expect((await postJson(`${collector.url}/v1/deletions`, { userId: 'x' })).status).toBe(401);
    expect((await postJson(`${collector.url}/v1/deletions`, { userId: 'x' }, bearer('wrong'))).status).toBe(401);
    expect((await postJson(`${collector.url}/v1/deletions`, { userId: 'x' }, { authorization: basic('wk_web') })).status).toBe(401);
    expect((await postJson(`${collector.url}/v1/deletions`, { user: 'x' }, bearer(ADMIN))).body).toMatchObject({ field: 'userId' });
  });
});

describe('POST /v1/deliveries/:id/replay', () => {
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const replay = (id: string, headers: Record<string, string> = {}) => postJson(`${collector.url}/v1/deliveries/${id}/replay`, {}, headers);

  it('sends a kept event again through the queue: same messageId and body bytes, as a new delivery', async () => {
    const analytics = new Analytics('wk_app', { endpoint: collector.url });
    analytics.track({ userId: 'u1', event: 'replay-me' });
    await analytics.close();
    await waitFor(() => hookC.requests.some((r) => r.body.includes('replay-me')), 'the first delivery');
    const [original] = streamed((e) => e.message.event === 'replay-me');

    const res = await replay(original!.id, bearer(ADMIN));
    expect(res).toMatchObject({ status: 202, body: { replayOf: original!.id, id: expect.any(String) } });
    expect(res.body.id).not.toBe(original!.id);
    await waitFor(() => hookC.requests.filter((r) => r.body.includes('replay-me')).length === 2, 'the second delivery');
    const [first, second] = hookC.requests.filter((r) => r.body.includes('replay-me'));
    expect(second!.body).toBe(first!.body);
    await waitFor(() => streamed((e) => e.id === res.body.id)[0]?.webhooks[0]?.status === 'delivered', 'the redelivery to show');
    expect(streamed((e) => e.id === res.body.id)[0]).toMatchObject({ origin: 'redelivery', replayOf: original!.id });
  });

  it('401 without the admin token; 404 for an event that is not kept', async () => {
    const [kept] = streamed((e) => e.webhooks.length > 0);
    expect((await replay(kept!.id)).status).toBe(401);
    expect((await replay(kept!.id, bearer('wrong'))).status).toBe(401);
    expect((await replay(kept!.id, { authorization: basic('wk_web') })).status).toBe(401);
    expect(await replay('00000000-0000-0000-0000-000000000000', bearer(ADMIN))).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
  });
});

describe('GET /events/:id', () => {
  it('shows the exact body and headers sent, with configured header values and the secret hidden', async () => {
    const analytics = new Analytics('wk_web', { endpoint: collector.url });
    analytics.track({ userId: 'u1', event: 'inspect-me' });
    await analytics.close();
    await waitFor(() => hookA.requests.some((r) => r.body.includes('inspect-me')), 'the delivery');
    const [event] = streamed((e) => e.message.event === 'inspect-me');
    const sent = hookA.requests.find((r) => r.body.includes('inspect-me'))!;
    const res = await fetch(`${collector.url}/events/${event!.id}`);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const detail = await res.json();
    expect(detail.body).toBe(sent.body);
    expect(detail.signature).toMatchObject({ header: 'x-signature', value: sent.headers['x-signature'] });
    expect(detail.requests[0].headers).toMatchObject({ 'x-env': '(hidden: set in the config)', 'x-signature': sent.headers['x-signature'] });
    expect(JSON.stringify(detail)).not.toContain(SECRET);
    expect((await fetch(`${collector.url}/events/nope`)).status).toBe(404);
  });
});

/** A POST whose body never ends: only an answer given before reading all of it can arrive. */
function rawPost(headers: Record<string, string>, chunks: string[]): Promise<{ status: number; body: string }> {
  const url = new URL(`${collector.url}/v1/batch`);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { authorization: basic('wk_web'), ...headers } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode!, body });
        req.destroy();
      });
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
  });
}
