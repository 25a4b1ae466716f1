import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type JournalOptions, JournalStore } from '../../../src/delivery/journal/store.js';
import { tempDir } from '../../../../../test/helpers/collector.js';
import type { Delivery } from '../../../src/delivery/store.js';
import { delivery, storeContract } from '../store-contract.js';

storeContract('JournalStore', async () => {
  const temp = tempDir();
  return { make: (options) => new JournalStore(path.join(temp.dir, 'data'), options), remove: temp.remove };
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

function store(options: JournalOptions = {}): JournalStore {
  const created = new JournalStore(path.join(temp.dir, 'data'), options);
  open.push(created);
  return created;
}

const data = () => path.join(temp.dir, 'data');
/** The journal's segment files, oldest first. */
const segments = () => readdirSync(data()).filter((name) => /^journal-\d{8}\.ndjson$/.test(name)).sort().map((name) => path.join(data(), name));
const journalSize = () => segments().reduce((sum, file) => sum + statSync(file).size, 0);
const journalLines = () => segments().flatMap((file) => readFileSync(file, 'utf8').split('\n').filter((line) => line !== ''));

/** Opens a store on the data dir and returns what it hands out as due now. */
async function pending(opened = store()): Promise<Delivery[]> {
  await opened.open();
  return (await opened.claim(10_000, 60_000)).map((held) => held.delivery);
}

/** A journal that accepted one delivery, `a`, and was closed; @returns its last segment file. */
async function closedWithOne(): Promise<string> {
  const first = store();
  await first.open();
  await first.accept([delivery('a')]);
  await first.close();
  return segments().at(-1)!;
}

/** Accepts a delivery and settles it as delivered: traffic that leaves nothing pending. */
async function acceptAndSettle(opened: JournalStore, id: string): Promise<void> {
  const [held] = await opened.accept([delivery(id)], { claim: 1, lease: 60_000 });
  await opened.settle(held!, 'delivered');
}

describe('JournalStore', () => {
  it('upgrades a version-1 journal at open: what was pending, with its retry, audiences, and bodies fixed from the acceptance time', async () => {
    mkdirSync(data());
    const { webhook: _, ...old } = delivery('old', 4_000);
    const v1 = [
      { op: 'journal', version: 1 },
      { op: 'accept', deliveries: [{ ...old, acceptedAt: 4_000 }, delivery('retried'), delivery('settled')] },
      { op: 'retry', id: 'retried', at: 0, attempts: 2, targets: [1] },
      { op: 'settle', id: 'settled', outcome: 'delivered' },
      { op: 'accept', deliveries: [], audience: { source: 'web', state: { audience: 'A', members: ['u1'] } } },
    ];
    writeFileSync(path.join(data(), 'journal.ndjson'), v1.map((line) => `${JSON.stringify(line)}\n`).join(''));

    const first = store();
    expect(await first.open()).toEqual({ pending: 2 });
    expect(existsSync(path.join(data(), 'journal.ndjson'))).toBe(false);
    await first.close();
    const second = store();
    await second.open();
    const claimed = await second.claim(10, 60_000);
    expect(claimed.map((held) => [held.delivery, held.attempt, held.targets])).toEqual([
      [delivery('old', 4_000), 1, undefined],
      [delivery('retried'), 3, [1]],
    ]);
    expect(JSON.parse(claimed[0]!.delivery.webhook.body)).toMatchObject({ messageId: 'm-old', receivedAt: '1970-01-01T00:00:04.000Z' });
    let previous: unknown;
    await second.syncAudience('web', 'A', (state) => ((previous = state), { deliveries: [], state: state! }));
    expect(previous).toEqual({ audience: 'A', members: ['u1'] });
  });

  it('ignores a last line cut short by a crash, and skips a damaged line in the middle', async () => {
    const last = await closedWithOne();
    appendFileSync(last, 'not json\n');
    appendFileSync(last, `${JSON.stringify({ op: 'accept', order: 5, sizes: [], deliveries: [] })}\n`);
    appendFileSync(last, JSON.stringify({ op: 'accept', deliveries: [delivery('torn')] }).slice(0, 40));

    expect((await pending()).map((d) => d.id)).toEqual(['a']);
  });

  it('reports a damaged line and a torn one by file, line and byte, never quoting them: they hold messages', async () => {
    const last = await closedWithOne();
    const secret = delivery('secret', 1_000, { email: 'jane@example.com' });
    appendFileSync(last, `${JSON.stringify({ op: 'accept', deliveries: [secret] }).slice(0, 120)}!\n`);
    appendFileSync(last, JSON.stringify({ op: 'accept', deliveries: [secret] }).slice(0, 150));
    const lines: { level: string; msg: string }[] = [];
    const logger = { warn: (_: object, msg: string) => lines.push({ level: 'warn', msg }), error: (_: object, msg: string) => lines.push({ level: 'error', msg }) };

    expect((await pending(store({ logger }))).map((d) => d.id)).toEqual(['a']);
    expect(lines.map(({ level }) => level)).toEqual(['error', 'warn']);
    expect(lines[0]!.msg).toMatch(/line 3 \(byte \d+, 121 bytes\)/);
    expect(lines[1]!.msg).toMatch(/line 4, byte \d+/);
    for (const { msg } of lines) {
      expect(msg).toContain(last);
      expect(msg).not.toContain('jane@example.com');
      expect(msg).not.toContain('"deliveries"');
    }
  });

  it('deletes a segment once nothing in it is pending, and copies a long-pending delivery forward: the journal stays small', async () => {
    const first = store({ segmentSize: 2_000 });
    await first.open();
    for (let i = 0; i < 60; i++) {
      if (i === 7) await first.accept([delivery(`d${i}`)]);
      else await acceptAndSettle(first, `d${i}`);
      // Twice what is pending, one segment, and the record that crossed it.
      expect(journalSize()).toBeLessThan(2 * 600 + 2_000 + 1_500);
    }
    await first.close();

    expect((await pending()).map((d) => d.id)).toEqual(['d7']);
  });

  it('copies a retry forward with the URLs it waits for: after the copy and a reopen it is hastened for those alone', async () => {
    const first = store({ segmentSize: 2_000 });
    await first.open();
    const [held] = await first.accept([delivery('r')], { claim: 1, lease: 60_000 });
    await first.retry(held!, 60_000, [0, 1], [], [1]);
    const original = segments()[0];
    for (let i = 0; i < 30; i++) await acceptAndSettle(first, `d${i}`);
    await first.close();
    // Its acceptance and retry were copied forward as one line, and the segment they were in deleted.
    expect(segments()).not.toContain(original);
    expect(journalLines().filter((line) => line.includes('"op":"accept"') && line.includes('"waitingFor":[1]'))).toHaveLength(1);

    const second = store();
    await second.open();
    expect(await second.hasten('web', 0)).toBe(0);
    expect(await second.hasten('web', 1)).toBe(1);
    expect((await second.claim(10, 60_000)).map((claimed) => [claimed.delivery.id, claimed.targets])).toEqual([['r', [0, 1]]]);
    await second.close();
  });

  it('keeps a backlog larger than a segment while traffic around it settles: the journal stays within twice the backlog and a segment', async () => {
    const first = store({ segmentSize: 2_000 });
    await first.open();
    await first.accept(Array.from({ length: 40 }, (_, i) => delivery(`backlog${i}`)));
    const backlog = journalSize();
    for (let i = 0; i < 200; i++) {
      await acceptAndSettle(first, `new${i}`);
      expect(journalSize()).toBeLessThan(2 * backlog + 2_000 + 1_500);
    }
    await first.close();
    const kept = await pending();
    expect(kept.map((d) => d.id)).toEqual(Array.from({ length: 40 }, (_, i) => `backlog${i}`));
  });

  it('keeps the segments it no longer needs as records for keepSettledFor: settled deliveries stay readable, across a restart, until too old or too many bytes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const first = store({ segmentSize: 2_000, keepSettledFor: 60_000 });
      await first.open();
      for (let i = 0; i < 30; i++) await acceptAndSettle(first, `d${i}`);
      const records = () => readdirSync(data()).filter((name) => name.startsWith('records-'));
      expect(records().length).toBeGreaterThan(3);
      // The journal proper stays small: what is retired is never replayed.
      expect(segments().length).toBeLessThanOrEqual(2);
      expect(await first.find('d0')).toMatchObject({ state: 'delivered', delivery: delivery('d0') });
      await first.close();

      const second = store({ segmentSize: 2_000, keepSettledFor: 60_000 });
      expect(await second.open()).toEqual({ pending: 0 });
      expect((await second.lookup('m-d1')).map((record) => record.state)).toEqual(['delivered']);
      // Once the oldest records are older than keepSettledFor, the next retirement lets them go.
      vi.setSystemTime(Date.now() + 61_000);
      for (let i = 30; i < 40; i++) await acceptAndSettle(second, `d${i}`);
      expect(await second.find('d0')).toBeUndefined();
      expect(await second.find('d38')).toMatchObject({ state: 'delivered' });
      await second.close();

      // A byte limit smaller than one retired segment keeps none.
      const third = store({ segmentSize: 2_000, keepSettledFor: 60_000, keepSettledBytes: 100 });
      await third.open();
      expect(records()).toEqual([]);
      expect(await third.find('d38')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('with keepSettledFor 0, deletes a segment once nothing in it is pending: a settled delivery is gone', async () => {
    const first = store({ segmentSize: 2_000, keepSettledFor: 0 });
    await first.open();
    for (let i = 0; i < 30; i++) await acceptAndSettle(first, `d${i}`);
    expect(readdirSync(data()).filter((name) => name.startsWith('records-'))).toEqual([]);
    expect(await first.find('d0')).toBeUndefined();
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
    const ids = journalLines().flatMap((line) => JSON.parse(line).deliveries?.map((d: Delivery) => d.id) ?? []);
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => `c${i}`));
  });

  it('names segmentSize when it is not an integer >= 1024', () => {
    expect(() => store({ segmentSize: 100 })).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', message: expect.stringContaining('`segmentSize`') }));
  });

  it('refuses a data dir held by a live process, and takes over one left by a dead process', async () => {
    const first = store();
    await first.open();
    writeFileSync(path.join(temp.dir, 'data', 'lock'), String(process.ppid));
    await expect(store().open()).rejects.toMatchObject({ code: 'ERR_DATA_DIR_LOCKED', message: expect.stringContaining(`process ${process.ppid}`) });

    writeFileSync(path.join(temp.dir, 'data', 'lock'), '2147483646');
    await expect(store().open()).resolves.toEqual({ pending: 0 });
  });

  // A lock holds its process's id and when it started: after a crash and a reboot, or in a
  // container, the id can be a live process's that never held the directory.
  it.skipIf(!existsSync('/proc/self/stat'))('takes over a lock whose process id now belongs to another, live process', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    try {
      await store().open();
      const lock = path.join(temp.dir, 'data', 'lock');
      writeFileSync(lock, `${other.pid}\nanother boot:1`);
      await expect(store().open()).resolves.toEqual({ pending: 0 });
      expect(readFileSync(lock, 'utf8').split('\n')[0]).toBe(String(process.pid));
    } finally {
      other.kill('SIGKILL');
    }
  });

  describe('the ids it de-duplicates on (seen-*.bin)', () => {
    const seenFiles = () => readdirSync(data()).filter((name) => /^seen-\d{8}\.bin$/.test(name)).sort();
    const arrival = (messageId: string) => ({ source: 'web', messageId });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('remembers the ids before a record cut short by a crash, and appends after it in a new file', async () => {
      const first = store();
      await first.open();
      await first.ingest([arrival('a'), arrival('b')]);
      await first.close();
      // A crash in the middle of the next record: half of it reached the disk.
      const [file] = seenFiles();
      appendFileSync(path.join(data(), file!), Buffer.alloc(7, 0xab));
      const second = store();
      await second.open();
      expect((await second.ingest([arrival('a'), arrival('b'), arrival('c')])).repeats.map((at) => at !== undefined)).toEqual([true, true, false]);
      await second.close();
      const third = store();
      await third.open();
      expect((await third.ingest([arrival('c')])).repeats[0]).toBeTypeOf('number');
    });

    it('starts a new file every eighth of the window and deletes a file once all its ids are older than the window', async () => {
      vi.useFakeTimers({ toFake: ['Date'], now: 1_700_000_000_000 });
      const opened = store({ dedupeWindow: 8_000 });
      await opened.open();
      await opened.ingest([arrival('t0')]);
      // Written behind the acceptance: a file is named when its write starts, or deleted, after the answer.
      await vi.waitFor(() => expect(seenFiles()).toEqual(['seen-00000001.bin']));
      vi.setSystemTime(1_700_000_001_500);
      await opened.ingest([arrival('t1')]);
      await vi.waitFor(() => expect(seenFiles()).toEqual(['seen-00000001.bin', 'seen-00000002.bin']));
      vi.setSystemTime(1_700_000_008_000);
      await opened.ingest([arrival('t2')]);
      // The first file's only id is 8 s old: out of the window, so is the file.
      await vi.waitFor(() => expect(seenFiles()).toEqual(['seen-00000002.bin', 'seen-00000003.bin']));
      expect((await opened.ingest([arrival('t1')])).repeats[0]).toBe(1_700_000_001_500);
      expect((await opened.ingest([arrival('t0')])).repeats[0]).toBeUndefined();
    });

    it("rebuilds a forwarded message's id from the journal when a crash came before its seen-log write, and writes it there before that segment goes", async () => {
      const forwarded = { ...arrival('m-f'), delivery: delivery('f') };
      const crashed = store();
      await crashed.open();
      await crashed.ingest([forwarded, arrival('m-n')]);
      await vi.waitFor(() => expect(seenFiles()).toHaveLength(1));
      // The crash: the seen log's write, made behind the answer, never reached the disk.
      for (const file of seenFiles()) unlinkSync(path.join(data(), file));

      const second = store();
      await second.open();
      // The journal's acceptance carried the forwarded id; the id forwarded nowhere is gone (documented).
      expect((await second.ingest([forwarded, arrival('m-n')])).repeats.map((at) => at !== undefined)).toEqual([true, false]);
      const [held] = await second.claim(10, 60_000);
      expect(held?.delivery.id).toBe('f');
      const firstSegment = segments()[0]!;
      await second.settle(held!, 'delivered');
      // The settlement empties the first segment: the next write deletes it.
      await second.accept([delivery('other')]);
      expect(existsSync(firstSegment)).toBe(false);

      // Another crash: now only the seen log knows the id.
      const third = store();
      await third.open();
      expect((await third.ingest([forwarded])).repeats[0]).toBeTypeOf('number');
      expect((await third.claim(10, 60_000)).map((claimed) => claimed.delivery.id)).toEqual(['other']);
    });

    it('writes no file with a window of 0', async () => {
      const opened = store({ dedupeWindow: 0 });
      await opened.open();
      await opened.ingest([arrival('z'), arrival('z')]);
      expect(seenFiles()).toEqual([]);
    });
  });
});
