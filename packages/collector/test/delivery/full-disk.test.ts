// The collector's promise on a disk that really fills (a 3 MiB tmpfs, the real CLI): what it
// answered 200 for is delivered, once; what it cannot record it refuses with 503 and Retry-After;
// it accepts again by itself once there is room, and it starts on a full disk.
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { basic, type Collector, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';
import { mountTmpfs } from '../../../../test/helpers/tmpfs.js';

// 3 MiB: the journal sets 1 MiB aside for settlements.
const disk = mountTmpfs('3m');
const skip = typeof disk === 'string' ? disk : undefined;
// 2 MiB: the reserve and the page's history (`historyEvents` 10,000 by default) would take it all.
const small = mountTmpfs('2m');
const skipSmall = typeof small === 'string' ? small : undefined;
let temp: ReturnType<typeof tempDir>;
let receiver: Loopback;
let healthy = false;
/** How many times the receiver accepted each messageId. */
let delivered = new Map<string, number>();

beforeEach(async () => {
  temp = tempDir();
  healthy = false;
  delivered = new Map();
  receiver = await startLoopback((req, res) => {
    if (!healthy) return void res.writeHead(503).end();
    const { messageId } = JSON.parse(req.body) as { messageId: string };
    delivered.set(messageId, (delivered.get(messageId) ?? 0) + 1);
    res.writeHead(200).end();
  });
});
afterEach(async () => {
  await stopAll();
  await receiver.close();
  temp.remove();
});
afterAll(() => {
  if (typeof disk !== 'string') disk.unmount();
  if (typeof small !== 'string') small.unmount();
});

/** A collector on `on`'s data dir forwarding to the receiver, retrying within 200 ms. */
function serveOn(on: Exclude<ReturnType<typeof mountTmpfs>, string>): Promise<Collector> {
  const config = writeConfig(temp.dir, {
    sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
    delivery: { minRetryDelay: 50, maxRetryDelay: 200 },
  });
  return startCollector(['--config', config, '--port', '0', '--data-dir', path.join(on.dir, 'data')]);
}

let batches = 0;
/** Sends a batch of 10 messages of about 1 kB; @returns the answer and their messageIds. */
async function send(collector: Collector) {
  const n = batches++;
  const ids = Array.from({ length: 10 }, (_, i) => `m${n}-${i}`);
  const batch = ids.map((messageId) => ({ type: 'track', userId: 'u', event: 'Fill', messageId, properties: { pad: 'x'.repeat(1_000) } }));
  const answer = await postJson(`${collector.url}/v1/batch`, { batch }, { authorization: basic('wk_web') });
  return { ...answer, ids };
}

/** Sends until a batch is answered 200: the collector accepts again by itself once it has room. */
async function acceptedEventually(collector: Collector, within = 10_000): Promise<string[]> {
  const deadline = Date.now() + within;
  for (;;) {
    const { status, ids } = await send(collector);
    if (status === 200) return ids;
    expect(status).toBe(503);
    if (Date.now() > deadline) throw new Error('Timed out waiting for a batch to be accepted again');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(skipSmall !== undefined)(`the collector on a 2 MiB disk${skipSmall ? ` skipped: ${skipSmall}` : ''}`, () => {
  it('with the default history, filled until 503 while the receiver is down, accepts again by itself once the backlog drained, fill after fill', async () => {
    const collector = await serveOn(small as Exclude<typeof small, string>);
    // Each round leaves the page's history larger: the second found the disk taken by it.
    for (let round = 0; round < 3; round++) {
      healthy = false;
      const answered: string[] = [];
      for (let status = 200; status === 200 && answered.length < 20_000; ) {
        const sent = await send(collector);
        status = sent.status;
        if (status === 200) answered.push(...sent.ids);
        else expect(status).toBe(503);
      }
      expect(answered.length).toBeGreaterThan(100);
      healthy = true;
      await waitFor(() => answered.every((id) => delivered.has(id)), `the ${answered.length} messages answered 200`, 30_000);
      // Neither the page nor its history keeps the room the journal gave back.
      const later = await acceptedEventually(collector);
      await waitFor(() => later.every((id) => delivered.has(id)), 'the messages accepted after the drain');
    }
    expect([...delivered.values()].filter((count) => count > 1)).toEqual([]);
  });
});

describe.skipIf(skip !== undefined)(`the collector on a full disk${skip ? ` skipped: ${skip}` : ''}`, () => {
  const serve = () => serveOn(disk as Exclude<typeof disk, string>);
  it('refuses with 503 and Retry-After once full, delivers each message it answered 200 for once, accepts again by itself, and starts on a full disk', async () => {
    const full = disk as Exclude<typeof disk, string>;
    const first = await serve();
    const answered: string[] = [];
    const refused: { status: number; retryAfter: string | null }[] = [];
    while (refused.length < 5 && answered.length < 20_000) {
      const { status, headers, ids } = await send(first);
      if (status === 200) answered.push(...ids);
      else refused.push({ status, retryAfter: headers.get('retry-after') });
    }
    expect(answered.length).toBeGreaterThan(500);
    expect(refused).toEqual(refused.map(() => ({ status: 503, retryAfter: expect.stringMatching(/^\d+$/) })));

    // The receiver is back: everything answered 200 arrives, and the room it took comes back.
    healthy = true;
    await waitFor(() => answered.every((id) => delivered.has(id)), `the ${answered.length} messages answered 200`, 30_000);
    const later = await acceptedEventually(first);
    await waitFor(() => later.every((id) => delivered.has(id)), 'the messages accepted after the disk had room again');

    // The receiver is down again, with messages pending, when the collector is killed and the
    // disk filled to the last byte: it starts, delivers them, and sends nothing delivered again.
    healthy = false;
    const pending = await acceptedEventually(first);
    expect(await first.stop('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
    full.fill();
    const second = await serve();
    healthy = true;
    await waitFor(() => pending.every((id) => delivered.has(id)), 'the messages pending at the restart');
    full.drain();
    const last = await acceptedEventually(second);
    await waitFor(() => last.every((id) => delivered.has(id)), 'the messages accepted after the restart');
    expect([...delivered.entries()].filter(([, count]) => count > 1)).toEqual([]);
    expect(delivered.size).toBe(answered.length + later.length + pending.length + last.length);
    expect(second.stderr()).not.toContain('unreadable');
  });
});
