// Who may read the messages and change state: a collector listening beyond loopback answers its
// page, stream, history, details, replays and deletions only to a bearer token or a signed-in
// browser; it refuses to start there without a token. Real `serve` processes.
import http from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, type Collector, postJson, runCli, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';

const ADMIN = 'admin-token-0123456789';
const READER = 'reader-token-0123456789';
const temp = tempDir();
afterEach(stopAll);
afterAll(() => temp.remove());

const SOURCES = [{ name: 'web', writeKey: 'wk_web' }];

/** A GET on 127.0.0.1 with the collector's own Host, as any client that reaches the port can send. */
function get(collector: Collector, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { port } = new URL(collector.url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { host: `localhost:${port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
        // A stream never ends: its first bytes tell enough.
        if (path === '/events') res.destroy();
      });
      const done = () => resolve({ status: res.statusCode!, headers: res.headers, body });
      res.once('end', done).once('close', done);
    });
    req.once('error', reject);
  });
}

/** The id of the first event the stream shows an admin (the detail and replay routes need one). */
function firstEventId(collector: Collector): Promise<string> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(collector.url);
    const req = http.get({ host: '127.0.0.1', port, path: '/events', headers: { host: `localhost:${port}`, ...bearer(ADMIN) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        const match = /^data: (.*)$/m.exec(text);
        if (!match) return;
        res.destroy();
        resolve((JSON.parse(match[1]!) as { id: string }).id);
      });
    });
    req.once('error', reject);
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('listening on every address (0.0.0.0)', () => {
  it('refuses to start without a token: exit 2, one line saying what to add', async () => {
    const result = await runCli(['serve', '--config', writeConfig(temp.dir, { sources: SOURCES }, 'open.json'), '--host', '0.0.0.0', '--port', '0', '--data-dir', `${temp.dir}/open`]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/0\.0\.0\.0.*"adminToken"/);
  });

  /** A collector on 0.0.0.0 with one event; `readToken` too unless told otherwise. */
  async function exposed(tokens: Record<string, string> = { adminToken: ADMIN, readToken: READER }): Promise<{ collector: Collector; id: string }> {
    const config = writeConfig(temp.dir, { ...tokens, sources: SOURCES }, 'exposed.json');
    const collector = await startCollector(['--config', config, '--host', '0.0.0.0', '--port', '0', '--data-dir', `${temp.dir}/exposed`]);
    expect((await postJson(`${collector.url}/v1/track`, { messageId: 'm-secret', userId: 'secret-user', event: 'Private', properties: { email: 'a@b.example' } }, { authorization: basic('wk_web') })).status).toBe(200);
    return { collector, id: await firstEventId(collector) };
  }

  it('shows no message to a client without credentials, even with the Host of localhost: 401, no data, no basic-auth dialog', async () => {
    // The admin token alone, as the finding had it: it must protect the reading routes too.
    const { collector, id } = await exposed({ adminToken: ADMIN });
    for (const path of ['/', '/events', '/history', `/events/${id}`, '/v1/messages/m-secret']) {
      const res = await get(collector, path);
      expect([path, res.status]).toEqual([path, 401]);
      expect(res.body).not.toContain('secret-user');
      expect(res.headers['www-authenticate'] ?? '').not.toMatch(/^basic/i);
    }
    for (const [path, body] of [[`/v1/deliveries/${id}/replay`, {}], ['/v1/deletions', { userId: 'secret-user' }]] as const) {
      const res = await postJson(`${collector.url}${path}`, body);
      expect([path, res.status]).toEqual([path, 401]);
      expect(res.headers.get('www-authenticate') ?? '').not.toMatch(/^basic/i);
    }
    // A wrong token, or a write key, is no better.
    expect((await get(collector, '/history', bearer('wrong-token-0123456789'))).status).toBe(401);
    expect((await get(collector, '/history', { authorization: basic('wk_web') })).status).toBe(401);
  });

  it('answers the admin token on every guarded route, and the read token on the reading ones only', async () => {
    const { collector, id } = await exposed();
    for (const token of [ADMIN, READER]) {
      for (const path of ['/', '/events', '/history', `/events/${id}`]) {
        const res = await get(collector, path, bearer(token));
        expect([path, res.status]).toEqual([path, 200]);
      }
      expect((await get(collector, `/events/${id}`, bearer(token))).body).toContain('secret-user');
      // Let through to the lookup, which finds no delivery: the source forwards nowhere.
      expect((await get(collector, '/v1/messages/m-secret', bearer(token))).status).toBe(404);
    }
    const asReader = await postJson(`${collector.url}/v1/deliveries/${id}/replay`, {}, bearer(READER));
    expect(asReader).toMatchObject({ status: 403, body: { code: 'ERR_FORBIDDEN', error: expect.stringContaining('adminToken') } });
    expect((await postJson(`${collector.url}/v1/deletions`, { userId: 'u' }, bearer(READER))).status).toBe(403);
    expect((await postJson(`${collector.url}/v1/deletions`, { userId: 'u' }, bearer(ADMIN))).status).toBe(200);
    // Nothing the collector wrote names a token.
    expect(collector.stderr()).not.toContain(ADMIN);
    expect(collector.stderr()).not.toContain(READER);
  });

  it('signs a browser in with a form: an HttpOnly, SameSite=Strict cookie that is not the token, Secure behind HTTPS', async () => {
    const { collector } = await exposed();
    const signIn = (token: string, headers: Record<string, string> = {}) =>
      // Under a name the live page answers to: 0.0.0.0 is none.
      fetch(`http://localhost:${new URL(collector.url).port}/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ token }),
        redirect: 'manual',
      });
    const wrong = await signIn('wrong-token-0123456789');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(await wrong.text()).toContain('name="token"');

    const right = await signIn(READER);
    expect(right.status).toBe(303);
    const cookie = right.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).not.toMatch(/Secure/i);
    expect(cookie).not.toContain(READER);
    const pair = cookie.split(';')[0]!;
    expect((await get(collector, '/history', { cookie: pair })).status).toBe(200);
    // A cookie someone edited is refused.
    expect((await get(collector, '/history', { cookie: `${pair.slice(0, -2)}xx` })).status).toBe(401);

    const proxied = await signIn(READER, { 'x-forwarded-proto': 'https' });
    expect(proxied.headers.get('set-cookie')).toMatch(/; Secure/i);
  });

  it('ends an open stream when a reload changes the token it was opened with: the page must show its credentials again', async () => {
    const { collector } = await exposed();
    const { port } = new URL(collector.url);
    const ended = new Promise<boolean>((resolve) => {
      http.get({ host: '127.0.0.1', port, path: '/events', headers: { host: `localhost:${port}`, ...bearer(READER) } }, (res) => {
        expect(res.statusCode).toBe(200);
        const timer = setTimeout(() => resolve(false), 5_000);
        res.resume().once('end', () => {
          clearTimeout(timer);
          resolve(true);
        });
        writeConfig(temp.dir, { adminToken: ADMIN, readToken: 'another-reader-token-0123', sources: SOURCES }, 'exposed.json');
        collector.child.kill('SIGHUP');
      });
    });
    expect(await ended).toBe(true);
    expect((await get(collector, '/history', bearer(READER))).status).toBe(401);
  });

  // SameSite=Strict does not keep out a page of another port of the same host, or of a sibling
  // subdomain: they are the same site. A signed-in browser's request that changes state must come
  // from the live page itself.
  it('refuses a replay or a deletion a page of another origin sends with the session cookie, and takes the live page\'s own', async () => {
    const { collector, id } = await exposed();
    const port = new URL(collector.url).port;
    const page = `http://localhost:${port}`;
    const signedIn = await fetch(`${page}/session`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: ADMIN }), redirect: 'manual' });
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const post = (path: string, body: string, headers: Record<string, string>) =>
      fetch(`${page}${path}`, { method: 'POST', headers: { cookie, 'content-type': 'text/plain', ...headers }, body });
    const attacker = 'http://localhost:9400';
    const crossOrigin: Record<string, string>[] = [{ origin: attacker, 'sec-fetch-site': 'same-site' }, { origin: attacker }, { 'sec-fetch-site': 'cross-site' }];
    for (const headers of crossOrigin) {
      const deletion = await post('/v1/deletions', '{"userId":"victim"}', headers);
      expect([headers, deletion.status, (await deletion.json()).code]).toEqual([headers, 403, 'ERR_FORBIDDEN']);
      expect((await post(`/v1/deliveries/${id}/replay`, '{}', headers)).status).toBe(403);
    }
    // The live page's own requests, and a token (which no other page can send without a preflight).
    expect((await post('/v1/deletions', '{"userId":"u"}', { origin: page, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await postJson(`${collector.url}/v1/deletions`, { userId: 'u' }, { ...bearer(ADMIN), origin: attacker })).status).toBe(200);
  });
});

describe('listening on loopback', () => {
  it('shows the page without credentials, but a write-key 401 alone asks for basic auth, and replay without adminToken says so with 403', async () => {
    const collector = await startCollector(['--config', writeConfig(temp.dir, { sources: SOURCES }, 'local.json'), '--port', '0', '--data-dir', `${temp.dir}/local`]);
    expect((await get(collector, '/')).status).toBe(200);
    const replay = await postJson(`${collector.url}/v1/deliveries/none/replay`, {});
    expect(replay).toMatchObject({ status: 403, body: { error: expect.stringContaining('adminToken') } });
    expect(replay.headers.get('www-authenticate')).toBeNull();
    expect(replay.body.error).not.toMatch(/redelivery are/);
    expect((await postJson(`${collector.url}/v1/track`, { userId: 'u', event: 'E' })).headers.get('www-authenticate')).toMatch(/^Basic /);
    // Relayed by a proxy, with no token to sign in with: refused, saying what to add.
    const relayed = await get(collector, '/', { 'x-forwarded-for': '203.0.113.9' });
    expect(relayed.status).toBe(401);
    expect(JSON.parse(relayed.body)).toMatchObject({ code: 'ERR_UNAUTHORIZED', error: expect.stringContaining('readToken') });
  });

  it('asks for credentials from a request a proxy relayed (X-Forwarded-For), when a token is configured', async () => {
    const collector = await startCollector(['--config', writeConfig(temp.dir, { adminToken: ADMIN, sources: SOURCES }, 'proxied.json'), '--port', '0', '--data-dir', `${temp.dir}/proxied`]);
    expect((await get(collector, '/', { 'x-forwarded-for': '203.0.113.9' })).status).toBe(401);
    expect((await get(collector, '/', { 'x-forwarded-for': '203.0.113.9', ...bearer(ADMIN) })).status).toBe(200);
  });
});
