import { log } from 'batched-analytics/internal';
import { diskRoom } from '../disk.js';
import { encodeAccept } from './format.js';
import { readPlaces } from './read-deliveries.js';
import type { PendingIndex } from './pending-index.js';
import type { Reserve } from './reserve.js';
import type { RetiredSegments } from './retired.js';
import type { Segment } from './segment.js';
import type { Segments } from './segments.js';
import { copied, type JournalWriter, type Queued } from './writer.js';

/** A drained head smaller than this is never weighed against the disk's free room. */
const IDLE_LOOK = 64 * 1024;
/** How often, at most, a drained head is weighed against the disk's free room, in ms. */
const IDLE_LOOK_EVERY = 100;

/** What {@link Compaction} works on, and with. */
export interface CompactionParts {
  /** The data directory: how much room its disk has left. */
  dir: string;
  /** See `JournalOptions.segmentSize`. */
  segmentSize: number;
  segments: Segments;
  /** Where what is pending lies: what copying a segment forward writes, and where it then lies. */
  index: Pick<PendingIndex, 'entriesIn' | 'audiencesIn' | 'nextOrder' | 'move' | 'moveAudience'>;
  writer: Pick<JournalWriter, 'full' | 'deferring' | 'write'>;
  reserve: Pick<Reserve, 'missing' | 'roomCameBack'>;
  retired: Pick<RetiredSegments, 'trim' | 'retire'>;
  /** Writes the ids the seen log holds in memory only (absent with de-duplication off). */
  flushSeen: () => Promise<void> | undefined;
}

/**
 * Gives the journal's disk space back as deliveries settle: starts a new head when the current one
 * is full (or drained), retires the oldest segments once nothing in them is pending, and copies the
 * oldest segment's pending records forward once the journal is mostly dead, so reclaiming it never
 * needs room for a full copy.
 */
export class Compaction {
  readonly #dir: string;
  readonly #segmentSize: number;
  readonly #segments: Segments;
  readonly #index: CompactionParts['index'];
  readonly #writer: CompactionParts['writer'];
  readonly #reserve: CompactionParts['reserve'];
  readonly #retired: CompactionParts['retired'];
  readonly #flushSeen: CompactionParts['flushSeen'];
  /** When `#outgrew` last looked at the disk (ms since the epoch). */
  #lookedAt = 0;

  constructor(parts: CompactionParts) {
    this.#dir = parts.dir;
    this.#segmentSize = parts.segmentSize;
    this.#segments = parts.segments;
    this.#index = parts.index;
    this.#writer = parts.writer;
    this.#reserve = parts.reserve;
    this.#retired = parts.retired;
    this.#flushSeen = parts.flushSeen;
  }

  /**
   * Whether a head nothing pending is left in holds more than the disk has left: on a small disk a
   * drained head below an eighth of a segment would take the room the next acceptances need.
   * Looked at (statfs) at most every 100 ms, and only for a head of 64 KiB or more.
   */
  async #outgrew(head: Segment): Promise<boolean> {
    const now = Date.now();
    if (head.size < IDLE_LOOK || now < this.#lookedAt + IDLE_LOOK_EVERY) return false;
    this.#lookedAt = now;
    return (await diskRoom(this.#dir)).free < head.size;
  }

  /** Gives disk space back: new head when due, deletes emptied segments, copies the oldest forward when the journal is mostly dead. */
  async maintain(): Promise<void> {
    const head = this.#segments.head;
    // On a short disk (full, or the reserve not set aside again yet), a head with nothing pending
    // gives its room back at once: acceptances wait for that room.
    const short = this.#writer.full || this.#reserve.missing;
    await this.#retired.trim(short);
    const idle = head.live === 0 && (head.size >= (short ? 1 : this.#segmentSize / 8) || (await this.#outgrew(head)));
    if (head.size >= this.#segmentSize || idle) await this.#segments.roll();
    await this.removeDead();
    const segments = this.#segments.all;
    const total = segments.reduce((sum, segment) => sum + segment.size, 0);
    const live = segments.reduce((sum, segment) => sum + segment.liveBytes, 0);
    // Not while settlements wait for room: written after a copy, an older retry would undo it.
    if (segments.length > 1 && !this.#writer.full && !this.#reserve.missing && !this.#writer.deferring && total > 2 * live + this.#segmentSize) {
      await this.#carry(segments[0]!);
      await this.removeDead();
    }
  }

  /**
   * Deletes the oldest segments while nothing in them is pending. Only from the oldest: a newer
   * segment's settlements may be all that keeps an older one's deliveries from being replayed.
   */
  async removeDead(): Promise<void> {
    // A segment's acceptances may hold the only durable copy of ids the seen log has not written yet.
    const segments = this.#segments.all;
    if (segments.length > 1 && segments[0]!.live === 0) await this.#flushSeen();
    while (segments.length > 1 && segments[0]!.live === 0) {
      await this.#retired.retire(segments[0]!);
      this.#segments.dropOldest();
      // Room came back: the reserve may be set aside again at once.
      this.#reserve.roomCameBack();
    }
  }

  /** Copies what is pending in `segment` (deliveries with their schedules, audiences) to the head. */
  async #carry(segment: Segment): Promise<void> {
    const items: Queued[] = [];
    // Only what is pending is read: a segment copied forward is mostly settled.
    const entries = [...this.#index.entriesIn(segment)];
    await readPlaces(entries, (bytes, index) => {
      const entry = entries[index]!;
      // A claim in progress is void after a restart: its delivery is due at once then.
      const schedule = entry.targets === undefined ? undefined : { at: entry.claim === undefined ? entry.due : 0, attempts: entry.attempts, targets: entry.targets, waitingFor: entry.waitingFor };
      const { line: copy, starts } = encodeAccept(entry.order, [bytes], { schedule });
      items.push(copied(copy, (head, offset) => this.#index.move(entry, head, offset + starts[0]!)));
    });
    for (const kept of this.#index.audiencesIn(segment)) {
      const { line: copy } = encodeAccept(this.#index.nextOrder, [], { audience: kept.record });
      items.push(copied(copy, (head) => this.#index.moveAudience(kept, head, copy.length)));
    }
    if (items.length > 0) await this.#writer.write(items);
    log('collector: journal segment %d copied forward: %d record(s)', segment.number, items.length);
  }
}
