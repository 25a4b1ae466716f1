// The routes browsers and apps send to (analytics.js's /v1/<letter> and /v1/b, the mobile
// libraries' /v1/import), on the raw HTTP API of the real CLI, with a real webhook receiver.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../../../../test/helpers/collector.js';
import { send, type SourcesFixture, startSources } from '../../../../test/helpers/sources.js';

let fixture: SourcesFixture;

beforeAll(async () => {
  fixture = await startSources([{ name: 'web', writeKey: 'wk_web' }]);
});

afterAll(() => fixture?.close());

const url = (path: string) => `${fixture.collector.url}${path}`;
const auth = { authorization: basic('wk_web') };

/** A message of each type, as analytics.js sends it on its route. */
const CALLS: [route: string, message: Record<string, unknown>][] = [
  ['/v1/t', { type: 'track', event: 'Clicked', properties: { n: 1 } }],
  ['/v1/i', { type: 'identify', traits: { plan: 'pro' } }],
  ['/v1/p', { type: 'page', name: 'Home', properties: { path: '/' } }],
  ['/v1/s', { type: 'screen', name: 'Settings' }],
  ['/v1/g', { type: 'group', groupId: 'acme' }],
  ['/v1/a', { type: 'alias', previousId: 'anon-1' }],
];

describe('single-call routes', () => {
  it.each(CALLS)('%s takes one call, with the write key as the basic-auth user, in a text/plain body', async (route, message) => {
    const messageId = randomUUID();
    const answer = await send(url(route), { ...message, userId: 'u1', messageId }, { headers: auth });
    expect(answer).toMatchObject({ status: 200, body: { success: true } });
    expect(await fixture.webhookOf(messageId)).toMatchObject({ type: message.type });
  });

  it.each(CALLS)('%s takes the write key as `writeKey` in the body, and drops it from the message', async (route, message) => {
    const messageId = randomUUID();
    expect((await send(url(route), { ...message, userId: 'u2', messageId, writeKey: 'wk_web' })).status).toBe(200);
    expect(JSON.stringify(await fixture.webhookOf(messageId))).not.toContain('wk_web');
  });

  it('refuses a messageId over 100 characters, which would not fit a receiver\'s headers, naming it; takes one of 100', async () => {
    const long = 'm'.repeat(20_000);
    const single = await send(url('/v1/t'), { type: 'track', event: 'E', userId: 'u1', messageId: long }, { headers: auth });
    expect(single).toMatchObject({ status: 400, body: { code: 'ERR_VALIDATION', field: 'messageId' } });
    expect(single.body.error).toMatch(/at most 100 characters, got 20000/);
    const first = randomUUID();
    const batch = await send(url('/v1/batch'), { batch: [{ type: 'track', event: 'E', userId: 'u1', messageId: first }, { type: 'track', event: 'E', userId: 'u1', messageId: 'm'.repeat(101) }] }, { headers: auth });
    expect(batch).toMatchObject({ status: 400, body: { field: 'batch[1].messageId' } });
    const longest = `${randomUUID()}-`.padEnd(100, 'm');
    expect((await send(url('/v1/t'), { type: 'track', event: 'E', userId: 'u1', messageId: longest }, { headers: auth })).status).toBe(200);
    expect(await fixture.webhookOf(longest)).toMatchObject({ messageId: longest });
    expect(fixture.bodies().some((body) => body.messageId === first)).toBe(false);
  });

  it('refuses a call whose type is not its route\'s, naming `type`', async () => {
    const answer = await send(url('/v1/t'), { type: 'identify', userId: 'u' }, { headers: auth });
    expect(answer).toMatchObject({ status: 400, body: { field: 'type' } });
  });
});

describe('batch routes', () => {
  it.each(['/v1/batch', '/v1/b', '/v1/import'])('%s takes a batch with the write key in the body', async (route) => {
    const ids = [randomUUID(), randomUUID()];
    const batch = ids.map((messageId) => ({ type: 'track', event: 'Batched', userId: 'u', messageId }));
    expect((await send(url(route), { writeKey: 'wk_web', batch })).status).toBe(200);
    for (const id of ids) expect(await fixture.webhookOf(id)).toMatchObject({ event: 'Batched' });
  });

  it('takes a gzip body on /v1/import, as the mobile libraries send', async () => {
    const messageId = randomUUID();
    const body = { batch: [{ type: 'screen', name: 'Zipped', userId: 'u', messageId }] };
    expect((await send(url('/v1/import'), body, { headers: auth, gzip: true })).status).toBe(200);
    expect(await fixture.webhookOf(messageId)).toMatchObject({ name: 'Zipped' });
  });

  it('checks a key in the header before the body: an unknown one is 401 even beside a good `writeKey`', async () => {
    const batch = [{ type: 'track', event: 'Refused', userId: 'u' }];
    const answer = await send(url('/v1/b'), { writeKey: 'wk_web', batch }, { headers: { authorization: basic('wk_other') } });
    expect(answer).toMatchObject({ status: 401, body: { code: 'ERR_UNAUTHORIZED' } });
    expect(answer.headers['www-authenticate']).toMatch(/^Basic /);
  });

  it.each([
    [{ batch: [] }, 'no Authorization header and no `writeKey` in the body'],
    [{ writeKey: 'wk_nope', batch: [] }, 'an unknown `writeKey` in the body'],
    [{ writeKey: 42, batch: [] }, 'an unknown `writeKey` in the body'],
  ])('refuses %j with 401: %s', async (body, why) => {
    const answer = await send(url('/v1/b'), body);
    expect(answer).toMatchObject({ status: 401, body: { error: `Expected a source's write key as the basic-auth user or as \`writeKey\` in the body, got ${why}` } });
  });
});

describe('userId null', () => {
  it('means no userId: the anonymous visitor\'s message is forwarded by its anonymousId, without a userId key', async () => {
    const messageId = randomUUID();
    const answer = await send(url('/v1/t'), { type: 'track', event: 'Anonymous', userId: null, anonymousId: 'anon-7', messageId }, { headers: auth });
    expect(answer.status).toBe(200);
    const body = await fixture.webhookOf(messageId);
    expect(body.anonymousId).toBe('anon-7');
    expect('userId' in body).toBe(false);
  });

  it('still needs an anonymousId then, as the client does', async () => {
    const answer = await send(url('/v1/b'), { writeKey: 'wk_web', batch: [{ type: 'track', event: 'Nobody', userId: null }] });
    expect(answer).toMatchObject({ status: 400, body: { field: 'batch[0].userId', error: 'batch[0]: Expected `userId` or `anonymousId` on a track call, got neither' } });
  });

  it('is lenient about userId only: an anonymousId of null is refused, naming it', async () => {
    const answer = await send(url('/v1/t'), { event: 'Null anonymous', userId: 'u', anonymousId: null }, { headers: auth });
    expect(answer).toMatchObject({ status: 400, body: { field: 'anonymousId' } });
  });
});
