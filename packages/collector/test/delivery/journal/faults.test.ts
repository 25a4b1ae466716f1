// The journal on a disk that really fills (a 2 MiB tmpfs): what it was told is durable stays so,
// what it refused leaves no trace, and it heals by itself once there is room again.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { JournalStore } from '../../../src/delivery/journal/store.js';
import { type Delivery, StoreUnavailableError } from '../../../src/delivery/store.js';
import { tempDir } from '../../../../../test/helpers/collector.js';
import { mountTmpfs, type Tmpfs } from '../../../../../test/helpers/tmpfs.js';
import { delivery } from '../store-contract.js';
import { recordingLogger, type RecordingLogger } from '../../observe/recording-logger.js';

const mounted = mountTmpfs('2m');
const skip = typeof mounted === 'string' ? mounted : undefined;
let disk: Tmpfs;
const opened: JournalStore[] = [];
/** What the stores of a test report, to the logger they were given. */
let logger: RecordingLogger;
const reports = () => logger.lines.map(({ level, msg }) => [level, msg] as const);

beforeAll(() => {
  if (typeof mounted !== 'string') disk = mounted;
});
afterAll(() => {
  if (typeof mounted !== 'string') mounted.unmount();
});
beforeEach(() => {
  logger = recordingLogger();
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((store) => store.close()));
  if (disk !== undefined) {
    disk.drain();
    // A fresh data dir per test.
    rmSync(path.join(disk.dir, 'data'), { recursive: true, force: true });
    mkdirSync(path.join(disk.dir, 'data'));
  }
});

function store(dir = path.join(disk.dir, 'data')): JournalStore {
  // A quarter of the disk: the default (1 MiB) would be half of this one.
  const created = new JournalStore(dir, { reserve: 512 * 1024, logger });
  opened.push(created);
  return created;
}

/** A delivery of about `bytes` bytes on disk. */
const sized = (id: string, bytes: number): Delivery => delivery(id, 1_000, { pad: 'x'.repeat(bytes) });

/** What a fresh store on the same data dir hands out, by id. */
async function pendingAfterRestart(first: JournalStore): Promise<string[]> {
  await first.close();
  const second = store();
  await second.open();
  return (await second.claim(100_000, 60_000)).map((held) => held.delivery.id);
}

describe.skipIf(skip !== undefined)(`JournalStore on a full disk${skip ? ` skipped: ${skip}` : ''}`, () => {
  it('refuses an acceptance the disk has no room for with ERR_STORE_UNAVAILABLE, leaving no trace: the next one is kept whole', async () => {
    const first = store();
    await first.open();
    await first.accept([delivery('before')]);
    disk.fill(8 * 1024);
    // Larger than the room left: part of it is written before the disk is full.
    await expect(first.accept([sized('too-big', 64 * 1024)])).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE', retryAfter: expect.any(Number) });
    disk.drain();
    await first.accept([delivery('after')]);

    expect(await pendingAfterRestart(first)).toEqual(['before', 'after']);
    expect(reports().filter(([, line]) => line.includes('unreadable'))).toEqual([]);
  });

  it('remembers none of the ids of an ingestion it refused: after a restart their resend is recorded, not dropped as a repeat', async () => {
    const first = store();
    await first.open();
    const arrivals = [
      { source: 'web', messageId: 'm-big', delivery: sized('big', 64 * 1024) },
      { source: 'web', messageId: 'm-nowhere' },
    ];
    disk.fill(8 * 1024);
    await expect(first.ingest(arrivals)).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    disk.drain();
    // Closed: whatever the seen log still had to write is written.
    await first.close();
    const second = store();
    await second.open();
    expect((await second.ingest(arrivals)).repeats).toEqual([undefined, undefined]);
    expect((await second.claim(100, 60_000)).map((held) => held.delivery.id)).toEqual(['big']);
  });

  it('fails a repeat that came while its first acceptance was being written, when that write fails: no 200 for a message then lost', async () => {
    const first = store();
    await first.open();
    disk.fill(8 * 1024);
    const original = first.ingest([{ source: 'web', messageId: 'm-once', delivery: sized('big', 64 * 1024) }]);
    const repeat = first.ingest([{ source: 'web', messageId: 'm-once', delivery: delivery('again') }]);
    await expect(original).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(repeat).rejects.toBeInstanceOf(StoreUnavailableError);
    disk.drain();
    // Neither left its id behind: the client's resend is recorded.
    expect((await first.ingest([{ source: 'web', messageId: 'm-once', delivery: delivery('resent') }])).repeats).toEqual([undefined]);
  });

  it('records settlements on a full disk, reclaims what was delivered, and accepts again by itself', async () => {
    const first = store();
    await first.open();
    const accepted: string[] = [];
    for (let i = 0; ; i++) {
      try {
        await first.accept([sized(`m${i}`, 2_000)]);
        accepted.push(`m${i}`);
      } catch (error) {
        expect(error).toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
        break;
      }
    }
    expect(accepted.length).toBeGreaterThan(300);
    const claimed = await first.claim(100_000, 60_000);
    expect(claimed.map((held) => held.delivery.id)).toEqual(accepted);
    // The receiver is back: everything pending is delivered.
    expect(await Promise.all(claimed.map((held) => first.settle(held, 'delivered')))).toEqual(claimed.map(() => true));
    // Nothing was freed by hand: the journal gave back the room of what it delivered.
    await first.accept([delivery('later')]);

    expect(await pendingAfterRestart(first)).toEqual(['later']);
  });

  // A receiver down for long on a full disk: each retry's record (with its attempt) waits in memory
  // once the reserve is spent, until together they are larger than the whole disk.
  it('accepts again by itself once delivered and there is room, after the retries of a long outage on a full disk held more than the disk', async () => {
    const first = store();
    await first.open();
    const ids = Array.from({ length: 100 }, (_, n) => `m${n}`);
    await first.accept(ids.map((id) => delivery(id)));
    disk.fill();
    const failed = (attempt: number) => ({ at: Date.now(), attempt, url: 'https://hooks.example/in', error: `refused ${'x'.repeat(2_000)}`, durationMs: 5 });
    for (let attempt = 1; attempt <= 15; attempt++) {
      const claimed = await first.claim(1_000, 60_000);
      expect(claimed).toHaveLength(ids.length);
      expect(await Promise.all(claimed.map((held) => first.retry(held, 0, [0], [failed(attempt)])))).toEqual(claimed.map(() => true));
    }
    // The receiver is back, and room is made on the disk.
    const claimed = await first.claim(1_000, 60_000);
    expect(await Promise.all(claimed.map((held) => first.settle(held, 'delivered')))).toEqual(claimed.map(() => true));
    disk.drain();
    let accepted: unknown;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      accepted = await first.accept([delivery('later')]).then(() => true, (error: unknown) => error);
      if (accepted === true) break;
    }
    expect(accepted).toBe(true);
    // What memory held of the attempts was bounded: the rest is said, as is the end of the refusals.
    const warnings = reports().filter(([level]) => level === 'warn').map(([, line]) => line);
    expect(warnings).toContainEqual(expect.stringMatching(/^collector: the disk was full: the records of \d+ attempts were not kept/));
    expect(warnings.at(-1)).toMatch(/acceptances resume/);
    expect(await pendingAfterRestart(first)).toEqual(['later']);
  }, 30_000);

  it('keeps settlements made on a full disk through a crash, written into the room it set aside', async () => {
    const first = store();
    await first.open();
    // More settlements than the last page of the journal has room for (tmpfs counts pages).
    const ids = Array.from({ length: 200 }, (_, n) => `m${n}`);
    await first.accept(ids.map((id) => delivery(id)));
    disk.fill();
    const claimed = await first.claim(1_000, 60_000);
    // Half are delivered; the others keep their segment (and its records of the first half) alive.
    const delivered = claimed.filter((_, n) => n % 2 === 0);
    expect(await Promise.all(delivered.map((held) => first.settle(held, 'delivered')))).toEqual(delivered.map(() => true));
    // The process dies here, before there is room again: the next start sends none of them again.
    const second = store();
    await second.open();
    expect((await second.claim(1_000, 60_000)).map((held) => held.delivery.id)).toEqual(ids.filter((_, n) => n % 2 === 1));
    expect(reports().filter(([level]) => level === 'warn').map(([, line]) => line)).toContainEqual(expect.stringContaining('journal reserve'));
  });

  it('refuses acceptances while it cannot set its reserve aside, though a message would fit, and takes them once it can', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const first = store();
    await first.open();
    await first.close();
    rmSync(path.join(disk.dir, 'data', 'reserve'));
    disk.fill(64 * 1024);
    const second = store();
    await second.open();
    await expect(second.accept([delivery('d')])).rejects.toMatchObject({ code: 'ERR_STORE_UNAVAILABLE', message: expect.stringContaining('set aside') });
    disk.drain();
    vi.setSystemTime(Date.now() + 1_000);
    await second.accept([delivery('e')]);
    expect(await pendingAfterRestart(second)).toEqual(['e']);
  });

  it('opens on a full disk, with everything pending, and accepts once there is room', async () => {
    const first = store();
    await first.open();
    await first.accept([delivery('a'), delivery('b')]);
    await first.close();
    disk.fill();

    const second = store();
    expect(await second.open()).toEqual({ pending: 2 });
    const claimed = await second.claim(10, 60_000);
    expect(claimed.map((held) => held.delivery)).toEqual([delivery('a'), delivery('b')]);
    await second.release(claimed);
    disk.drain();
    await second.accept([delivery('c')]);
    expect(await pendingAfterRestart(second)).toEqual(['a', 'b', 'c']);
  });
});

describe('JournalStore replay', () => {
  it('reports a line it cannot read at error level, with where it is (never what it holds), and keeps the others', async () => {
    const temp = tempDir();
    try {
      const dir = path.join(temp.dir, 'data');
      mkdirSync(dir);
      const line = (record: unknown) => `${JSON.stringify(record)}\n`;
      writeFileSync(
        path.join(dir, 'journal.ndjson'),
        line({ op: 'journal', version: 1 }) +
          line({ op: 'accept', deliveries: [delivery('a')] }) +
          '{"op":"accept","deliveries":[{"id":"glued"\n' +
          line({ op: 'accept', deliveries: [delivery('b')] }),
      );
      const first = store(dir);
      await first.open();
      expect((await first.claim(10, 60_000)).map((held) => held.delivery.id)).toEqual(['a', 'b']);
      expect(reports()).toEqual([['error', expect.stringMatching(/unreadable.*journal\.ndjson line 3 \(byte \d+, 42 bytes\)$/)]]);
      expect(reports()[0]![1]).not.toContain('glued');
    } finally {
      await Promise.all(opened.splice(0).map((s) => s.close()));
      temp.remove();
    }
  });
});
