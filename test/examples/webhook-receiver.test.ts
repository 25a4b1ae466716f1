import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookReceiver } from '../../examples/webhook-receiver.mjs';
import { type Message, signBody, type WebhookBody, WebhookDestination, type WebhookError } from '../../packages/client/src/webhooks/index.js';

const secret = 's3cret';
const identify: Message = { type: 'identify', messageId: 'm1', timestamp: '2024-03-01T12:30:00.123Z', context: {}, userId: 'u1', traits: { plan: 'pro' } };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

async function startExample(): Promise<{ url: string; received: WebhookBody[] }> {
  const received: WebhookBody[] = [];
  const server: Server = createWebhookReceiver(secret, (body) => received.push(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, received };
}

function destination(url: string, sharedSecret?: string): WebhookDestination {
  const dest = new WebhookDestination({ webhooks: [{ url }], ...(sharedSecret ? { sharedSecret } : {}) });
  cleanup.unshift(() => dest.close());
  return dest;
}

describe('examples/webhook-receiver', () => {
  it('accepts what the destination signed with the shared secret', async () => {
    const { url, received } = await startExample();
    const receivedAt = '2024-03-01T12:30:00.500Z';
    expect(await destination(url, secret).deliver(identify, { receivedAt })).toEqual({ delivered: true, attempts: 1 });
    expect(received).toEqual([{ version: 1, type: 'identify', userId: 'u1', traits: { plan: 'pro' }, timestamp: identify.timestamp, messageId: 'm1', receivedAt }]);
  });

  it('answers 401 to another secret or no signature, which the destination does not retry', async () => {
    const { url, received } = await startExample();
    for (const sharedSecret of ['wrong', undefined]) {
      const result = await destination(url, sharedSecret).deliver(identify);
      expect(result).toMatchObject({ delivered: false, attempts: 1 });
      expect((result.error as WebhookError).failures[0]!.error).toMatchObject({ status: 401 });
    }
    expect(received).toEqual([]);
  });

  it('refuses a signed body that was re-serialised on the way', async () => {
    const { url, received } = await startExample();
    const sent = '{"version":1,"type":"identify","userId":"u1","traits":{}}';
    const reserialised = JSON.stringify(JSON.parse(sent), null, 1);
    const res = await request(url, { method: 'POST', body: reserialised, headers: { 'x-signature': signBody(sent, secret) } });
    await res.body.dump();
    expect(res.statusCode).toBe(401);
    expect(received).toEqual([]);
  });
});

describe('node examples/webhook-receiver.mjs', () => {
  const script = fileURLToPath(new URL('../../examples/webhook-receiver.mjs', import.meta.url));

  it('runs with its documented command and prints each verified body', async () => {
    const child = spawn(process.execPath, [script], { env: { ...process.env, WEBHOOK_SECRET: secret, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanup.push(async () => {
      child.kill();
      await once(child, 'exit');
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const url = /on (http:\S+)$/.exec((await lines.next()).value as string)![1]!;
    expect(await destination(url, secret).deliver(identify)).toEqual({ delivered: true, attempts: 1 });
    expect(JSON.parse((await lines.next()).value as string)).toMatchObject({ type: 'identify', userId: 'u1' });
  });

  it('prints one line and exits 2 without WEBHOOK_SECRET', async () => {
    const { WEBHOOK_SECRET: _, ...env } = process.env;
    const child = spawn(process.execPath, [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
