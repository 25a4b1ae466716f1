import { readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { log, prepareWebhook } from 'batched-analytics/internal';
import { JournalVersionError } from '../errors.js';
import type { Reporter } from '../../config/report.js';
import { encodeAccept, type JournalRecord, lines, type Schedule } from './format.js';
import type { PendingIndex } from './pending-index.js';
import { parseLine } from './replay.js';
import type { Segment } from './segment.js';
import { copied, type JournalWriter, type Queued } from './writer.js';
import { type AudienceRecord, type Delivery } from '../store.js';
import { sourceKey } from '../source-key.js';

/** The journal of version 1: one file, rewritten whole to compact it. Read once, then upgraded. */
const LEGACY = 'journal.ndjson';

/** What an upgrade enters in the index of what is pending. */
type UpgradeIndex = Pick<PendingIndex, 'order' | 'nextOrder' | 'enter' | 'keepAudience'>;

/** What a version-1 journal held pending: deliveries in acceptance order, with their retries, and audiences' latest states. */
export interface Version1State {
  pending: { delivery: Delivery; schedule?: Schedule }[];
  audiences: AudienceRecord[];
}

/**
 * Replays a version-1 journal (one file, `journal.ndjson`) in memory, as version 1 did.
 * @param parse reads a line, or reports why it cannot and returns undefined.
 * @throws {JournalVersionError} when its header names another version.
 */
export function readVersion1(
  file: string,
  bytes: Buffer,
  parse: (text: Buffer, number: number, start: number, whole: boolean) => JournalRecord | undefined,
): Version1State {
  const pending = new Map<string, { delivery: Delivery; schedule?: Schedule }>();
  const audiences = new Map<string, AudienceRecord>();
  for (const { start, line, number, whole } of lines(bytes)) {
    const record = parse(line, number, start, whole);
    if (record === undefined) continue;
    if (record.op === 'journal' && record.version !== 1) {
      throw new JournalVersionError(`${file} has journal version ${record.version}; this collector reads version 1 there`);
    }
    if (record.op === 'accept') {
      for (const delivery of record.deliveries) pending.set(delivery.id, { delivery: withBody(delivery) });
      if (record.audience) audiences.set(sourceKey(record.audience.source, record.audience.state.audience), record.audience);
    } else if (record.op === 'retry') {
      const kept = pending.get(record.id);
      if (kept !== undefined) kept.schedule = { at: record.at, attempts: record.attempts, targets: record.targets };
    } else if (record.op === 'settle') pending.delete(record.id);
  }
  return { pending: [...pending.values()], audiences: [...audiences.values()] };
}

/**
 * A delivery journaled before bodies were fixed at acceptance has its message and acceptance
 * time: its body is made from them once, when its journal is upgraded.
 */
function withBody(delivery: Delivery & { acceptedAt?: number }): Delivery {
  if (delivery.webhook !== undefined) return delivery;
  const { acceptedAt, ...rest } = delivery;
  return { ...rest, webhook: prepareWebhook(delivery.message, acceptedAt ?? Date.now()) };
}

/**
 * Reads a version-1 journal (one file) and writes what is pending in it into the head, durably,
 * before deleting it. It holds every pending delivery in memory, once, as version 1 did.
 */
export async function upgradeVersion1(dir: string, index: UpgradeIndex, writer: Pick<JournalWriter, 'write' | 'refusal'>, report: Reporter): Promise<void> {
  const file = path.join(dir, LEGACY);
  const bytes = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (bytes === undefined) return;
  const { pending, audiences } = readVersion1(file, bytes, (text, number, start, whole) => parseLine(report, file, text, number, start, whole));
  const items: Queued[] = [];
  for (const { delivery, schedule } of pending) {
    const body = Buffer.from(JSON.stringify(delivery));
    const order = index.order(1);
    const { line: copy, starts } = encodeAccept(order, [body], { schedule });
    const written = (segment: Segment, offset: number) => void index.enter(delivery, segment, offset + starts[0]!, body.length, order, schedule);
    items.push(copied(copy, written));
  }
  for (const record of audiences) {
    const { line: copy } = encodeAccept(index.nextOrder, [], { audience: record });
    items.push(copied(copy, (segment) => index.keepAudience(record, segment, copy.length)));
  }
  if (items.length > 0 && (await writer.write(items)).size > 0) throw writer.refusal;
  await unlink(file);
  await unlink(`${file}.tmp`).catch(() => undefined);
  log('collector: journal upgraded from version 1: %d pending, %d audiences', pending.length, audiences.length);
}
