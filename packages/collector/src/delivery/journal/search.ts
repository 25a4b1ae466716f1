import { type JournalRecord, lines } from './format.js';
import type { DeliveryRecord, RecoverQuery } from '../store.js';

/** What a search looks for: the deliveries of a `messageId`, one delivery by its `id`, or many by theirs. */
export type Wanted = { messageId: string } | { id: string } | { ids: ReadonlySet<string> };

/** A file's bytes, or undefined when it is gone (the journal deleted it meanwhile). */
type Read = () => Promise<Buffer | undefined>;

/**
 * Reads the deliveries `wanted` names out of journal files, oldest file first: their acceptance
 * (the delivery, as sent), then each retry and settlement after it (their attempts and outcome).
 * One file in memory at a time, and only the lines holding the text searched for are parsed: a
 * delivery's id or `messageId`, as JSON, found by a byte search; many ids are looked for by
 * parsing every line (one byte search per id would read each file as often).
 */
export async function searchJournal(files: readonly Read[], wanted: Wanted): Promise<DeliveryRecord[]> {
  const found = new Map<string, DeliveryRecord>();
  for (const read of files) {
    const bytes = await read();
    if (bytes === undefined) continue;
    if ('ids' in wanted) {
      for (const { line, whole } of lines(bytes)) if (whole) take(found, wanted, parseLine(line));
      continue;
    }
    const first = Buffer.from(JSON.stringify('messageId' in wanted ? wanted.messageId : wanted.id));
    // The acceptances first: they name the ids the retries and settlements after them carry.
    const starts = new Set(lineStarts(bytes, first));
    for (const start of [...starts].sort((a, b) => a - b)) take(found, wanted, parse(bytes, start));
    const changes = new Set<number>();
    for (const id of found.keys()) for (const start of lineStarts(bytes, Buffer.from(JSON.stringify(id)))) if (!starts.has(start)) changes.add(start);
    for (const start of [...changes].sort((a, b) => a - b)) take(found, wanted, parse(bytes, start));
  }
  return [...found.values()];
}

/**
 * The ids of the deliveries settled as failed (given up) within `query`'s window that no recovery
 * sent again yet, read from the settlement lines (found by a byte search, then parsed) and the
 * recoveries' acceptance lines. Their sources are not known here: the caller reads the deliveries.
 */
export async function givenUp(files: readonly Read[], { since, until }: RecoverQuery): Promise<Set<string>> {
  const failed = new Set<string>();
  const recovered = new Set<string>();
  for (const read of files) {
    const bytes = await read();
    if (bytes === undefined) continue;
    for (const start of lineStarts(bytes, FAILED)) {
      const record = parse(bytes, start);
      if (record?.op === 'settle' && record.outcome === 'failed' && record.settledAt !== undefined && record.settledAt >= since && record.settledAt < until) failed.add(record.id);
    }
    for (const start of lineStarts(bytes, RECOVERS)) {
      const record = parse(bytes, start);
      if (record?.op === 'accept') for (const id of record.recovers ?? []) recovered.add(id);
    }
  }
  for (const id of recovered) failed.delete(id);
  return failed;
}
const FAILED = Buffer.from('"outcome":"failed"');
const RECOVERS = Buffer.from('"recovers":[');

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
  return end === -1 ? undefined : parseLine(bytes.subarray(start, end));
}

function parseLine(line: Buffer): JournalRecord | undefined {
  try {
    return JSON.parse(line.toString('utf8')) as JournalRecord;
  } catch {
    return undefined;
  }
}

/** Adds what a line says about the deliveries wanted. */
function take(found: Map<string, DeliveryRecord>, wanted: Wanted, record: JournalRecord | undefined): void {
  if (record === undefined || record.op === 'journal') return;
  if (record.op === 'accept') {
    for (const delivery of record.deliveries) {
      if ('messageId' in wanted ? delivery.webhook.messageId !== wanted.messageId : 'ids' in wanted ? !wanted.ids.has(delivery.id) : delivery.id !== wanted.id) continue;
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
