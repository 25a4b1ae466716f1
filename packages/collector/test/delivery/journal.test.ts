import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JournalStore } from '../../src/delivery/journal.js';
import { tempDir } from '../../../../test/helpers/collector.js';
import type { Delivery } from '../../src/delivery/store.js';
import { delivery, storeContract } from './store-contract.js';

storeContract('JournalStore', async () => {
  const temp = tempDir();
  return { make: () => new JournalStore(path.join(temp.dir, 'data')), remove: temp.remove };
});

let temp: ReturnType<typeof tempDir>;
const open: JournalStore[] = [];
beforeEach(() => {
  temp = tempDir();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((store) => store.close()));
  temp.remove();
});

function store(options: { compactAfter?: number } = {}): JournalStore {
  const created = new JournalStore(path.join(temp.dir, 'data'), options);
  open.push(created);
  return created;
}

const journal = () => path.join(temp.dir, 'data', 'journal.ndjson');

/** Opens a store on the data dir and returns what it hands out as due now. */
async function pending(opened = store()): Promise<Delivery[]> {
  await opened.open();
  return (await opened.claim(10_000, 60_000)).map((held) => held.delivery);
}

/** Accepts a delivery and settles it as delivered: traffic that leaves nothing pending. */
async function acceptAndSettle(opened: JournalStore, id: string): Promise<void> {
  const [held] = await opened.accept([delivery(id)], { claim: 1, lease: 60_000 });
  await opened.settle(held!, 'delivered');
}

describe('JournalStore', () => {
  it('gives a delivery journaled by an older version, without its body, the body fixed from its acceptance time', async () => {
    const first = store();
    await first.open();
    await first.close();
    const { webhook: _, ...old } = delivery('old', 4_000);
    appendFileSync(journal(), `${JSON.stringify({ op: 'accept', deliveries: [{ ...old, acceptedAt: 4_000 }] })}\n`);

    const back = await pending();
    expect(back).toEqual([delivery('old', 4_000)]);
    expect(JSON.parse(back[0]!.webhook.body)).toMatchObject({ messageId: 'm-old', receivedAt: '1970-01-01T00:00:04.000Z' });
  });

  it('ignores a last line cut short by a crash, and skips a damaged line in the middle', async () => {
    const first = store();
    await first.open();
    await first.accept([delivery('a')]);
    await first.close();
    appendFileSync(journal(), 'not json\n');
    appendFileSync(journal(), `${JSON.stringify({ op: 'accept', deliveries: [delivery('b')] })}\n`);
    appendFileSync(journal(), JSON.stringify({ op: 'accept', deliveries: [delivery('torn')] }).slice(0, 40));

    expect((await pending()).map((d) => d.id)).toEqual(['a', 'b']);
  });

  it('compacts on open and once compactAfter bytes were appended, keeping only the live state', async () => {
    const first = store({ compactAfter: 2_000 });
    await first.open();
    for (let i = 0; i < 20; i++) {
      if (i === 7) await first.accept([delivery(`d${i}`)]);
      else await acceptAndSettle(first, `d${i}`);
    }
    // Compacted while running: far less than the ~20 kB of 40 records.
    expect(statSync(journal()).size).toBeLessThan(2_000 + 600);
    await first.close();

    expect((await pending()).map((d) => d.id)).toEqual(['d7']);
    const lines = readFileSync(journal(), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toEqual([{ op: 'journal', version: 1 }, { op: 'accept', deliveries: [delivery('d7')] }]);
  });

  it('with a backlog larger than compactAfter, rewrites it only once as many bytes were appended again', async () => {
    const first = store({ compactAfter: 2_000 });
    await first.open();
    await first.accept(Array.from({ length: 40 }, (_, i) => delivery(`backlog${i}`)));
    await first.accept([delivery('tip')]); // crosses compactAfter: compacted to one line per delivery
    const live = statSync(journal()).size;
    const settles = () => readFileSync(journal(), 'utf8').split('\n').filter((line) => line.includes('"settle"')).length;
    // Traffic that settles as fast as it arrives: several times compactAfter in all, less than the backlog.
    let sent = 0;
    while (statSync(journal()).size - live < live / 2 && sent < 500) {
      await acceptAndSettle(first, `new${sent}`);
      sent += 1;
    }
    expect(statSync(journal()).size - live).toBeGreaterThan(2 * 2_000);
    expect(settles()).toBe(sent);
    while (statSync(journal()).size - live < live && settles() > 0 && sent < 1_000) {
      await acceptAndSettle(first, `new${sent}`);
      sent += 1;
    }
    expect(settles()).toBeLessThan(sent);
    await first.close();
    expect(await pending()).toHaveLength(41);
  });

  it('after 10,000 claims and settlements, hands out exactly what is pending: what was given back at once, a retry not before its time', async () => {
    const first = store();
    await first.open();
    const accepted = await first.accept(Array.from({ length: 10_000 }, (_, i) => delivery(`n${i}`)), { claim: 10_000, lease: 60_000 });
    const [later, ...rest] = accepted;
    await first.retry(later!, 60_000, [0]);
    await Promise.all(rest.slice(0, 9_000).map((held) => first.settle(held, 'delivered')));
    await first.release(rest.slice(9_000));
    const due = await first.claim(20_000, 60_000);
    expect(due.map((held) => held.delivery.id)).toEqual(rest.slice(9_000).map((held) => held.delivery.id));
    expect(await first.claim(20_000, 60_000)).toEqual([]);
  });

  it('writes each of many concurrent acceptances as a whole line, durable before close', async () => {
    const first = store();
    await first.open();
    await Promise.all(Array.from({ length: 50 }, (_, i) => first.accept([delivery(`c${i}`)])));
    // Not closed: what a crash right now would leave is what the next open reads.
    const lines = readFileSync(journal(), 'utf8').trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).deliveries?.[0]?.id).slice(1)).toEqual(Array.from({ length: 50 }, (_, i) => `c${i}`));
  });

  it('refuses a data dir held by a live process, and takes over one left by a dead process', async () => {
    const first = store();
    await first.open();
    writeFileSync(path.join(temp.dir, 'data', 'lock'), String(process.ppid));
    await expect(store().open()).rejects.toMatchObject({ code: 'ERR_DATA_DIR_LOCKED', message: expect.stringContaining(`process ${process.ppid}`) });

    writeFileSync(path.join(temp.dir, 'data', 'lock'), '2147483646');
    await expect(store().open()).resolves.toEqual({ pending: 0 });
  });
});
