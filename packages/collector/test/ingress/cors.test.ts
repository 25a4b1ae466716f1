// Web pages of other origins sending to the collector (CORS), and the settings analytics.js loads,
// on the raw HTTP API of the real CLI.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, waitFor } from '../../../../test/helpers/collector.js';
import { send, type SourcesFixture, startSources } from '../../../../test/helpers/sources.js';

const PAGE = 'http://page.test:8080';
const SHOP = 'https://shop.example.com';
const PROXY = '127.0.0.2';

let open: SourcesFixture;
/** Every source lists its origins: a preflight from another one is refused. */
let closed: SourcesFixture;

beforeAll(async () => {
  [open, closed] = await Promise.all([
    startSources([{ name: 'web', writeKey: 'wk_web' }, { name: 'shop', writeKey: 'wk_shop', allowedOrigins: [SHOP] }], { trustProxy: [PROXY] }),
    startSources([{ name: 'shop', writeKey: 'wk_shop', allowedOrigins: [SHOP] }], { publicUrl: 'https://collect.example.com/analytics/' }),
  ]);
});

afterAll(async () => {
  await Promise.all([open?.close(), closed?.close()]);
});

const preflight = (url: string, origin: string) =>
  send(url, undefined, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
  });
const INGESTION = ['/v1/t', '/v1/i', '/v1/p', '/v1/s', '/v1/g', '/v1/a', '/v1/b', '/v1/import', '/v1/batch', '/v1/track', '/v1/identify'];

describe('preflights', () => {
  it.each(INGESTION)('%s answers 204 allowing the origin, POST, and the authorization and content-type headers', async (route) => {
    const answer = await preflight(`${open.collector.url}${route}`, PAGE);
    expect(answer.status).toBe(204);
    expect(answer.headers).toMatchObject({ 'access-control-allow-origin': PAGE, 'access-control-allow-methods': 'POST', vary: 'Origin' });
    expect(answer.headers['access-control-allow-headers']!.split(', ')).toEqual(expect.arrayContaining(['authorization', 'content-type']));
    expect(Number(answer.headers['access-control-max-age'])).toBeGreaterThan(0);
  });

  it('answers the settings route\'s, allowing GET', async () => {
    const answer = await preflight(`${open.collector.url}/v1/projects/wk_web/settings`, PAGE);
    expect(answer).toMatchObject({ status: 204, headers: { 'access-control-allow-origin': PAGE, 'access-control-allow-methods': 'GET' } });
  });

  it.each(['/', '/events', '/history', '/metrics', '/v1/deletions', '/v1/audiences'])('is not answered on %s: no page of another origin calls it', async (route) => {
    const answer = await preflight(`${open.collector.url}${route}`, PAGE);
    expect(answer.status).toBe(405);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('is refused (403, no allowance) for an origin that no source lists, when every source lists its origins', async () => {
    const answer = await preflight(`${closed.collector.url}/v1/t`, PAGE);
    expect(answer).toMatchObject({ status: 403, body: { code: 'ERR_ORIGIN' } });
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    expect((await preflight(`${closed.collector.url}/v1/t`, SHOP)).status).toBe(204);
  });
});

describe('answers to pages', () => {
  it('carry Access-Control-Allow-Origin, errors included', async () => {
    const url = `${open.collector.url}/v1/t`;
    const headers = { origin: PAGE, authorization: basic('wk_web') };
    const accepted = await send(url, { event: 'From a page', userId: 'u' }, { headers });
    const invalid = await send(url, { event: 'No one' }, { headers });
    const unknown = await send(url, { event: 'Unknown key', userId: 'u' }, { headers: { ...headers, authorization: basic('wk_nope') } });
    const malformed = await send(`${open.collector.url}/v1/b`, '{"batch":', { headers });
    const wrongMethod = await send(url, undefined, { headers, method: 'GET' });
    expect([accepted.status, invalid.status, unknown.status, malformed.status, wrongMethod.status]).toEqual([200, 400, 401, 400, 405]);
    for (const answer of [accepted, invalid, unknown, malformed, wrongMethod]) expect(answer.headers['access-control-allow-origin']).toBe(PAGE);
  });

  it('allow a source\'s own origins, and refuse (403, nothing recorded) a page of another', async () => {
    const url = `${open.collector.url}/v1/t`;
    const ours = randomUUID();
    const theirs = randomUUID();
    const allowed = await send(url, { event: 'Shop', userId: 'u', messageId: ours }, { headers: { origin: SHOP, authorization: basic('wk_shop') } });
    const refused = await send(url, { event: 'Elsewhere', userId: 'u', messageId: theirs }, { headers: { origin: PAGE, authorization: basic('wk_shop') } });
    expect(allowed).toMatchObject({ status: 200, headers: { 'access-control-allow-origin': SHOP } });
    expect(refused).toMatchObject({ status: 403, body: { code: 'ERR_ORIGIN' } });
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    await open.webhookOf(ours);
    // The write key of a source without allowedOrigins works from that page: the rule is per source.
    const elsewhere = randomUUID();
    expect((await send(url, { event: 'Web', userId: 'u', messageId: elsewhere }, { headers: { origin: PAGE, authorization: basic('wk_web') } })).status).toBe(200);
    await open.webhookOf(elsewhere);
    expect(open.bodies().filter((body) => body.messageId === theirs)).toEqual([]);
  });

  it('from a server (no Origin) are as before: no CORS headers, allowedOrigins does not apply', async () => {
    const messageId = randomUUID();
    const answer = await send(`${open.collector.url}/v1/t`, { event: 'Server', userId: 'u', messageId }, { headers: { authorization: basic('wk_shop') } });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    await waitFor(() => open.bodies().some((body) => body.messageId === messageId), 'the server\'s message');
  });
});

describe('GET /v1/projects/<writeKey>/settings', () => {
  it('tells analytics.js to send to the collector as the request reached it', async () => {
    const answer = await send(`${open.collector.url}/v1/projects/wk_web/settings`, undefined, { method: 'GET', headers: { origin: PAGE } });
    expect(answer).toMatchObject({ status: 200, headers: { 'access-control-allow-origin': PAGE } });
    const { host } = new URL(open.collector.url);
    expect(answer.body.integrations).toEqual({
      'Segment.io': expect.objectContaining({ apiKey: 'wk_web', apiHost: `${host}/v1`, protocol: 'http' }),
    });
  });

  it('says https behind a trusted proxy that says so, and not for anyone else', async () => {
    const url = `${open.collector.url}/v1/projects/wk_web/settings`;
    const headers = { 'x-forwarded-proto': 'https', host: 'collect.example.com' };
    const behind = await send(url, undefined, { method: 'GET', headers, localAddress: PROXY });
    const other = await send(url, undefined, { method: 'GET', headers, localAddress: '127.0.0.3' });
    expect(behind.body.integrations['Segment.io']).toMatchObject({ apiHost: 'collect.example.com/v1', protocol: 'https' });
    expect(other.body.integrations['Segment.io']).toMatchObject({ apiHost: 'collect.example.com/v1', protocol: 'http' });
  });

  it('names server.publicUrl when it is set, path included', async () => {
    const answer = await send(`${closed.collector.url}/v1/projects/wk_shop/settings`, undefined, { method: 'GET', headers: { origin: SHOP } });
    expect(answer.body.integrations['Segment.io']).toMatchObject({ apiKey: 'wk_shop', apiHost: 'collect.example.com/analytics/v1', protocol: 'https' });
  });

  it('answers 404, readable by the page, for an unknown write key', async () => {
    const answer = await send(`${open.collector.url}/v1/projects/wk_nope/settings`, undefined, { method: 'GET', headers: { origin: PAGE } });
    expect(answer).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' }, headers: { 'access-control-allow-origin': PAGE } });
  });

  it('refuses a page of an origin the source does not list', async () => {
    const answer = await send(`${open.collector.url}/v1/projects/wk_shop/settings`, undefined, { method: 'GET', headers: { origin: PAGE } });
    expect(answer).toMatchObject({ status: 403, body: { code: 'ERR_ORIGIN' } });
  });
});
