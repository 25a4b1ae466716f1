import { prepareWebhook } from 'batched-analytics/internal';
import { JournalVersionError } from '../errors.js';
import { type JournalRecord, lines, type Schedule } from './format.js';
import { type AudienceRecord, audienceKey, type Delivery } from '../store.js';

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
      if (record.audience) audiences.set(audienceKey(record.audience.source, record.audience.state.audience), record.audience);
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
