import type { AttemptRecord, AudienceRecord, Delivery, Outcome } from '../store.js';

/** A delivery's schedule, journaled with it when it is copied forward (and by retries). */
export interface Schedule {
  at: number;
  attempts: number;
  targets: number[];
  /** The targets it waits for only because their URL backs off or is disabled (`Store.retry`); absent: none. */
  waitingFor?: number[];
}

/**
 * One line of the journal. An acceptance's deliveries come last but for its audience, each
 * written as it was serialised once, and `sizes` says how long each is: the journal keeps only
 * where a delivery lies, and reads it back when it is claimed. `order` is the acceptance order of
 * its first delivery (kept when a delivery is copied forward); version-1 lines have neither.
 * An acceptance of the ingestion routes also carries each delivery's `messageId` as its source
 * claimed it (`seen`) and when (`seenAt`): the de-duplication's ids are rebuilt from these too.
 * A recovery's acceptance names the deliveries it sends again (`recovers`): they are never
 * recovered twice. A retry or a settlement carries what each receiver answered in its attempt (`log`), and a
 * settlement when it was made (`settledAt`): with the acceptance, the delivery's record.
 */
export type JournalRecord =
  | { op: 'journal'; version: number }
  | ({ op: 'accept'; order?: number; sizes?: number[]; deliveries: Delivery[]; audience?: AudienceRecord; seen?: string[]; seenAt?: number; recovers?: string[] } & Partial<Schedule>)
  | ({ op: 'retry'; id: string; log?: AttemptRecord[] } & Schedule)
  | { op: 'settle'; id: string; outcome: Outcome; settledAt?: number; log?: AttemptRecord[] };

const DELIVERIES = Buffer.from('"deliveries":[');

/** A record as its journal line (an acceptance has its own encoder: {@link encodeAccept}). */
export function recordLine(record: JournalRecord): Buffer {
  return Buffer.from(`${JSON.stringify(record)}\n`);
}

/** An acceptance as one line, and where each delivery's bytes start in it. */
export interface EncodedAccept {
  line: Buffer;
  starts: number[];
}

/** The ids an acceptance of the ingestion routes claimed, one per delivery, and when. */
export interface SeenRecord {
  at: number;
  messageIds: readonly string[];
}

/** What an acceptance line carries besides its deliveries. */
export interface AcceptExtras {
  /** A copy's schedule (copied forward, or upgraded). */
  schedule?: Schedule;
  audience?: AudienceRecord;
  seen?: SeenRecord;
  /** The deliveries a recovery sends again. */
  recovers?: readonly string[];
}

/**
 * Encodes an acceptance from its deliveries' serialised bytes.
 * @throws when the audience cannot be serialised (the deliveries already were).
 */
export function encodeAccept(order: number, bodies: readonly Buffer[], { schedule, audience, seen, recovers }: AcceptExtras = {}): EncodedAccept {
  const waiting = schedule?.waitingFor === undefined ? '' : `,"waitingFor":${JSON.stringify(schedule.waitingFor)}`;
  const scheduled = schedule === undefined ? '' : `,"at":${schedule.at},"attempts":${schedule.attempts},"targets":${JSON.stringify(schedule.targets)}${waiting}`;
  const head = Buffer.from(`{"op":"accept","order":${order}${scheduled},"sizes":${JSON.stringify(bodies.map((body) => body.length))},`);
  // After the deliveries, so that the ids' text cannot come before where they start.
  const ids = seen === undefined ? '' : `,"seenAt":${seen.at},"seen":${JSON.stringify(seen.messageIds)}`;
  const recovered = recovers === undefined ? '' : `,"recovers":${JSON.stringify(recovers)}`;
  const tail = Buffer.from(`]${audience === undefined ? '' : `,"audience":${JSON.stringify(audience)}`}${ids}${recovered}}\n`);
  const parts: Buffer[] = [head, DELIVERIES];
  const starts: number[] = [];
  let at = head.length + DELIVERIES.length;
  bodies.forEach((body, index) => {
    if (index > 0) {
      parts.push(COMMA);
      at += 1;
    }
    starts.push(at);
    parts.push(body);
    at += body.length;
  });
  parts.push(tail);
  return { line: Buffer.concat(parts), starts };
}
const COMMA = Buffer.from(',');

/** Where each delivery of an acceptance read back from `line` starts in it (version 2 lines). */
export function deliveryStarts(line: Buffer, sizes: readonly number[]): number[] {
  // The key cannot occur inside a string: a quote there is escaped.
  let at = line.indexOf(DELIVERIES) + DELIVERIES.length;
  return sizes.map((size) => {
    const start = at;
    at += size + 1;
    return start;
  });
}

/** Each line of a file's bytes, with where it starts; `whole` is false for a last line without its newline. */
export function* lines(bytes: Buffer): Generator<{ start: number; line: Buffer; number: number; whole: boolean }> {
  let start = 0;
  let number = 1;
  while (start < bytes.length) {
    const end = bytes.indexOf(0x0a, start);
    const whole = end !== -1;
    const stop = whole ? end : bytes.length;
    if (stop > start) yield { start, line: bytes.subarray(start, stop), number, whole };
    start = stop + 1;
    number += 1;
  }
}
