import type { JournalRecord } from './journal-format.js';
import type { DeliveryRecord } from './store.js';

/** What a search looks for: the deliveries of a `messageId`, or one delivery by its `id`. */
export type Wanted = { messageId: string } | { id: string };

/**
 * Reads the deliveries `wanted` names out of journal files, oldest file first: their acceptance
 * (the delivery, as sent), then each retry and settlement after it (their attempts and outcome).
 * One file in memory at a time, and only the lines holding the text searched for are parsed: a
 * delivery's id or `messageId`, as JSON, found by a byte search. Each of `files` reads a file,
 * or resolves undefined when it is gone (the journal deleted it meanwhile).
 */
export async function searchJournal(files: readonly (() => Promise<Buffer | undefined>)[], wanted: Wanted): Promise<DeliveryRecord[]> {
  const found = new Map<string, DeliveryRecord>();
  const first = Buffer.from(JSON.stringify('messageId' in wanted ? wanted.messageId : wanted.id));
  for (const read of files) {
    const bytes = await read();
    if (bytes === undefined) continue;
    // The acceptances first: they name the ids the retries and settlements after them carry.
    const starts = new Set(lineStarts(bytes, first));
    for (const start of [...starts].sort((a, b) => a - b)) take(found, wanted, parse(bytes, start));
    const changes = new Set<number>();
    for (const id of found.keys()) for (const start of lineStarts(bytes, Buffer.from(JSON.stringify(id)))) if (!starts.has(start)) changes.add(start);
    for (const start of [...changes].sort((a, b) => a - b)) take(found, wanted, parse(bytes, start));
  }
  return [...found.values()];
}

/** Where each line holding `needle` starts. */
function* lineStarts(bytes: Buffer, needle: Buffer): Generator<number> {
  let previous = -1;
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + needle.length)) {
    const start = bytes.lastIndexOf(0x0a, at) + 1;
    if (start !== previous) yield start;
    previous = start;
  }
}

/** The whole line at `start`; undefined when it is cut short or unreadable (the journal reports those when it replays). */
function parse(bytes: Buffer, start: number): JournalRecord | undefined {
  const end = bytes.indexOf(0x0a, start);
  if (end === -1) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8', start, end)) as JournalRecord;
  } catch {
    return undefined;
  }
}

/** Adds what a line says about the deliveries wanted. */
function take(found: Map<string, DeliveryRecord>, wanted: Wanted, record: JournalRecord | undefined): void {
  if (record === undefined || record.op === 'journal') return;
  if (record.op === 'accept') {
    for (const delivery of record.deliveries) {
      if ('messageId' in wanted ? delivery.webhook.messageId !== wanted.messageId : delivery.id !== wanted.id) continue;
      // A copy made forward (compaction) keeps the record it already has.
      if (!found.has(delivery.id)) found.set(delivery.id, { delivery, state: 'pending', attempts: [] });
    }
    return;
  }
  const kept = found.get(record.id);
  if (kept === undefined) return;
  if (record.log !== undefined) kept.attempts.push(...record.log);
  if (record.op === 'settle') {
    kept.state = record.outcome;
    if (record.settledAt !== undefined) kept.settledAt = record.settledAt;
  }
}
