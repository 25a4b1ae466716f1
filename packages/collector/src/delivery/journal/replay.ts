import { readFile } from 'node:fs/promises';
import { JournalVersionError } from '../errors.js';
import type { Reporter } from '../../config/report.js';
import { deliveryStarts, type JournalRecord, lines } from './format.js';
import type { PendingIndex } from './pending-index.js';
import { JOURNAL_VERSION, type Segment } from './segment.js';
import type { SeenIds } from './seen-ids.js';

/** What replaying changes in the index of what is pending. */
type ReplayIndex = Pick<PendingIndex, 'nextOrder' | 'ordered' | 'enter' | 'keepAudience' | 'get' | 'forget' | 'reschedule'>;

/** Replays a segment a previous run wrote: what is pending in it enters `pending`, the ids its acceptances carry `seen`. */
export async function replay(segment: Segment, pending: ReplayIndex, seen: Pick<SeenIds, 'recover'> | undefined, report: Reporter): Promise<void> {
  const bytes = await readFile(segment.file);
  for (const { start, line: text, number, whole } of lines(bytes)) {
    const record = parseLine(report, segment.file, text, number, start, whole);
    if (record === undefined) continue;
    if (record.op === 'journal') {
      if (record.version > JOURNAL_VERSION) {
        throw new JournalVersionError(`${segment.file} has journal version ${record.version}; this collector reads up to ${JOURNAL_VERSION}`);
      }
    } else if (record.op === 'accept') {
      const sizes = record.sizes ?? [];
      const starts = deliveryStarts(text, sizes);
      const order = record.order ?? pending.nextOrder;
      const schedule = record.at === undefined ? undefined : record;
      record.deliveries.forEach((delivery, index) => pending.enter(delivery, segment, start + starts[index]!, sizes[index]!, order + index, schedule));
      pending.ordered(order + record.deliveries.length);
      if (record.audience !== undefined) pending.keepAudience(record.audience, segment, text.length + 1);
      if (record.seen !== undefined && record.seenAt !== undefined) {
        const messageIds = record.seen;
        seen?.recover(record.deliveries.map(({ source }, index) => ({ source, messageId: messageIds[index]! })), record.seenAt);
      }
    } else change(pending, record);
  }
}

/** A settlement or retry, as replayed. */
function change(pending: ReplayIndex, record: JournalRecord & { op: 'retry' | 'settle' }): void {
  const entry = pending.get(record.id);
  if (entry === undefined) return;
  if (record.op === 'settle') return pending.forget(entry);
  pending.reschedule(entry, record);
}

/** A line as a record; undefined (reported to `report`) when it cannot be read. */
export function parseLine(report: Reporter, file: string, text: Buffer, number: number, start: number, whole: boolean): JournalRecord | undefined {
  try {
    const record = JSON.parse(text.toString('utf8')) as JournalRecord;
    if (record.op !== 'accept' || record.sizes === undefined || record.sizes.length === record.deliveries.length) return record;
  } catch {
    // Reported below.
  }
  // Acceptances are answered after their fsync: a last line cut short was never acknowledged.
  // Where, never what: a line holds messages, which no log shows.
  if (!whole) report.warn('collector: journal %s ends with a line cut short by a crash (line %d, byte %d, never acknowledged)', file, number, start);
  else report.error('collector: skipping an unreadable journal line: %s line %d (byte %d, %d bytes)', file, number, start, text.length);
  return undefined;
}
