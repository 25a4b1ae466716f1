// The event hub with a history other processes record into (collectors sharing a database): what a
// page sees when their states arrive, late or early, and that nobody is followed without a page;
// and a page that stops reading.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EventHub, PAGE_BUFFER_LIMIT } from '../../src/debugger/events.js';
import type { EventView } from '../../src/debugger/views.js';
import type { EventHistory, HistoryEntry } from '../../src/debugger/history.js';
import { waitFor, watchEvents } from '../../../../test/helpers/collector.js';

/** A history shared with other processes, whose states the test hands over itself. */
function sharedHistory() {
  const recorded: string[] = [];
  let listener: ((entries: HistoryEntry[]) => void) | undefined;
  const history: EventHistory = {
    open: async () => [],
    record: (entry) => recorded.push(`${entry.view.id} ${entry.view.status}`),
    compact: () => undefined,
    close: async () => undefined,
    follow: (_backlog, listen) => {
      listener = listen;
      return () => {
        listener = undefined;
      };
    },
  };
  return { history, recorded, following: () => listener !== undefined, deliver: (...views: EventView[]) => listener!(views.map((view) => ({ view }))) };
}

function view(id: string, webhook: Partial<EventView['webhooks'][number]>): EventView {
  const webhooks = [{ url: 'http://127.0.0.1:9/in', status: 'pending' as const, attempts: 0, ...webhook }];
  const settled = webhooks[0]!.status === 'delivered' ? 'delivered' : webhooks[0]!.status === 'retrying' ? 'retrying' : 'pending';
  return { id, receivedAt: new Date(0).toISOString(), source: 'web', origin: 'api', message: { type: 'track' }, routes: [], status: settled, webhooks };
}

const servers: http.Server[] = [];
// A test that failed left its page connected: cut it, or close() would wait for it.
afterEach(() => Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve).closeAllConnections()))));

async function page(hub: EventHub) {
  const server = http.createServer((_, res) => hub.attach(res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return watchEvents(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

/** A hub over a shared history, with a page watching it: following the other processes. */
async function followedHub() {
  const shared = sharedHistory();
  const hub = new EventHub({ history: shared.history });
  const events = await page(hub);
  await waitFor(shared.following, 'following');
  return { shared, hub, events };
}

describe('EventHub streams', () => {
  /** Opens a stream of `hub` attached with `until`, and resolves once the server ends it. */
  async function streamEnded(hub: EventHub, until: number | undefined, end?: () => void): Promise<boolean> {
    const server = http.createServer((_, res) => hub.attach(res, {}, until));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new Promise((resolve) => {
      http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (res) => {
        const timer = setTimeout(() => resolve(false), 3_000);
        res.resume().once('end', () => {
          clearTimeout(timer);
          resolve(true);
        });
        end?.();
      });
    });
  }

  // A session cookie lets a stream in until it expires: the stream must not outlive it.
  it('ends a stream when the credentials it opened with end', async () => {
    expect(await streamEnded(new EventHub(), Date.now() + 100)).toBe(true);
  });

  it('ends every stream when asked (the tokens changed), and no other', async () => {
    const hub = new EventHub();
    expect(await streamEnded(hub, undefined)).toBe(false);
    const other = new EventHub();
    expect(await streamEnded(other, undefined, () => setTimeout(() => other.endStreams(), 50))).toBe(true);
  });
});

describe('EventHub with a shared history', () => {
  it('follows the other processes only while a page is open', async () => {
    const shared = sharedHistory();
    const hub = new EventHub({ history: shared.history });
    expect(shared.following()).toBe(false);
    const events = await page(hub);
    await waitFor(shared.following, 'following');
    events.close();
    await waitFor(() => !shared.following(), 'following stopped');
    await hub.close();
  });

  it('keeps the further state of an event whichever arrives last, and records none of theirs', async () => {
    const { shared, hub, events } = await followedHub();
    // Delivered here on the second attempt; the other process's record of the first comes late.
    hub.add(view('late', {}));
    hub.updateWebhook('late', 0, { status: 'delivered', attempts: 2, httpStatus: 200 });
    shared.deliver(view('late', { status: 'retrying', attempts: 1, httpStatus: 503 }));
    // Still pending here; the other process delivered it.
    hub.add(view('theirs', {}));
    shared.deliver(view('theirs', { status: 'delivered', attempts: 1, httpStatus: 200 }));
    // Never seen here.
    shared.deliver(view('unknown', { status: 'delivered', attempts: 1 }));

    await waitFor(() => events.latest.has('unknown'), 'the unknown event');
    expect(events.latest.get('late')).toMatchObject({ status: 'delivered', webhooks: [{ status: 'delivered', attempts: 2, httpStatus: 200 }] });
    expect(events.latest.get('theirs')).toMatchObject({ status: 'delivered', webhooks: [{ status: 'delivered', httpStatus: 200 }] });
    expect(hub.get('unknown')).toMatchObject({ status: 'delivered' });
    // Its own events are recorded as they arrive too (another process may be the one to deliver
    // them, not knowing how they arrived); theirs never.
    expect(shared.recorded).toEqual(['late pending', 'late delivered', 'theirs pending']);
    events.close();
    await hub.close();
  });

  it("shows another process's retry after its record of the same attempt's answer: retrying is further than pending", async () => {
    const { shared, hub, events } = await followedHub();
    // The other process's first state was written between the answer (503) and its retry.
    shared.deliver(view('flaky', { status: 'pending', attempts: 1, attempt: 1, httpStatus: 503 }));
    shared.deliver(view('flaky', { status: 'retrying', attempts: 1, attempt: 1, httpStatus: 503, nextAttemptAt: '2030-01-01T00:00:00.000Z' }));

    await waitFor(() => events.all.some((shown) => shown.id === 'flaky' && shown.status === 'retrying'), 'the retry shown');
    expect(hub.get('flaky')).toMatchObject({ status: 'retrying', webhooks: [{ status: 'retrying', nextAttemptAt: '2030-01-01T00:00:00.000Z' }] });
    events.close();
    await hub.close();
  });

  it("records each retry's time, takes the state of a later attempt over one counting more requests, and learns how a claimed event arrived", async () => {
    const { shared, hub, events } = await followedHub();

    // Claimed here without having seen it arrive: shown as a replay, retried twice.
    hub.add({ ...view('claimed', {}), origin: 'replay' });
    hub.updateWebhook('claimed', 0, { status: 'retrying', attempts: 1, attempt: 3, nextAttemptAt: '2030-01-01T00:00:01.000Z' });
    hub.updateWebhook('claimed', 0, { attempts: 2 });
    hub.updateWebhook('claimed', 0, { status: 'retrying', attempts: 2, attempt: 4, nextAttemptAt: '2030-01-01T00:00:02.000Z' });
    // The accepting process's state, of its first attempt, with its requests counted from the start.
    shared.deliver(view('claimed', { status: 'retrying', attempts: 5, attempt: 1, nextAttemptAt: '2030-01-01T00:00:00.000Z' }));

    await waitFor(() => events.latest.get('claimed')?.origin === 'api', 'the origin learnt');
    expect(hub.get('claimed')!.webhooks).toMatchObject([{ attempt: 4, nextAttemptAt: '2030-01-01T00:00:02.000Z' }]);
    expect(shared.recorded).toEqual(['claimed pending', 'claimed retrying', 'claimed retrying']);
    events.close();
    await hub.close();
  });
});

describe('EventHub with a page that stops reading', () => {
  it('disconnects it once more than PAGE_BUFFER_LIMIT waits unsent, and keeps streaming to a page that reads', async () => {
    const hub = new EventHub();
    let stalled: http.ServerResponse | undefined;
    const server = http.createServer((req, res) => {
      if (req.url === '/stalled') stalled = res;
      hub.attach(res);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const reader = await watchEvents(`http://127.0.0.1:${port}`);
    const socket = net.connect(port, '127.0.0.1').pause();
    socket.on('error', () => undefined);
    socket.write('GET /stalled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitFor(() => stalled !== undefined, 'the stalled page to attach');

    // Frames of about 30 kB, until the stalled page is cut (60 MB at most).
    const pad = 'x'.repeat(30_000);
    let added = 0;
    let most = 0;
    while (!stalled!.destroyed && added < 2_000) {
      hub.add({ ...view(`e${added++}`, {}), message: { type: 'track', pad } });
      most = Math.max(most, stalled!.writableLength);
      await new Promise(setImmediate);
    }
    expect(stalled!.destroyed).toBe(true);
    expect(most).toBeGreaterThan(PAGE_BUFFER_LIMIT);
    expect(most).toBeLessThan(PAGE_BUFFER_LIMIT + 31_000);

    // Later events still reach the page that reads.
    for (let i = 0; i < 10; i += 1) hub.add(view(`later${i}`, {}));
    await waitFor(() => reader.latest.has('later9'), 'the reading page to get the later events');
    expect(reader.latest.size).toBe(added + 10);
    socket.destroy();
    reader.close();
    await hub.close();
  });
});
