import { byteLength, encodeText } from '../platform/bytes.js';
import {
  appendAll,
  appendBytes,
  closeFile,
  createExclusive,
  errorCode,
  HAS_FILE_SYSTEM,
  joinPath,
  listFiles,
  makeDir,
  openAppend,
  readText,
  removeFile,
  resolvePath,
  truncateFile,
  unlinkFile,
} from '../platform/spool-files.js';
import { liveOwner, ownerText } from '../platform/lock-owner.js';
import { ConfigError, SpoolError, SpoolLockedError } from '../core/errors.js';

/** A segment is closed for new messages past this size: settled segments are deleted whole, never rewritten. */
const SEGMENT_BYTES = 4 * 1024 * 1024;
/**
 * Lines waiting past this many bytes are written at once, without waiting for the timer: a long
 * synchronous burst of calls (the timer cannot fire meanwhile) then holds at most this much JSON
 * twice, in the queue and here, and reaches the disk as it goes.
 */
const PENDING_BYTES = 256 * 1024;
const SEGMENT_NAME = /^(\d{12})\.log$/;
const ACKS_NAME = /^(\d{12})\.acks$/;
const LOCK = 'lock';

/** One file of messages (`<n>.log`, a JSON line each) and its file of settled line numbers (`<n>.acks`). */
interface Segment {
  readonly log: string;
  readonly acks: string;
  /** Sequence number, in this process, of the segment's first message. */
  readonly firstSeq: number;
  /** Line numbers of this process's messages, for a segment a previous process left; else the line is `seq - firstSeq`. */
  readonly lineOf: number[] | undefined;
  /** Messages of this process in the segment. */
  count: number;
  /** How many of them settled. */
  settled: number;
  /** Size of the file once its pending lines are written. */
  bytes: number;
  /** Lines not written yet, joined by the next write. */
  pending: Lines;
  /** Line numbers settled, not written yet. */
  pendingAcks: number[];
  logFd: number | undefined;
  acksFd: number | undefined;
}

/**
 * Messages waiting to be written, as where the client's message store holds their lines (each
 * message's JSON and a newline, one after another): runs of them in its chunks, written from there
 * as they are, so a message is encoded to UTF-8 once, and copied nowhere for the spool.
 */
class Lines {
  readonly #chunks: Uint8Array[] = [];
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];

  get empty(): boolean {
    return this.#ends.length === 0;
  }

  /** The line `bytes` long (its newline included) at `chunk[start]`: the run it follows grows by it. */
  push(chunk: Uint8Array, start: number, bytes: number): void {
    const last = this.#ends.length - 1;
    if (last >= 0 && this.#chunks[last] === chunk && this.#ends[last] === start) this.#ends[last] = start + bytes;
    else {
      this.#chunks.push(chunk);
      this.#starts.push(start);
      this.#ends.push(start + bytes);
    }
  }

  /** The runs, in order: views of the store's chunks, valid until the store reads them. */
  runs(): Uint8Array[] {
    return this.#chunks.map((chunk, i) => chunk.subarray(this.#starts[i], this.#ends[i]));
  }
}

/** A message a previous process accepted and did not settle, as it would have been sent. */
export interface SpooledMessage {
  json: string;
  bytes: number;
}

/** What the spool is opened with. */
export interface SpoolOptions {
  /** Longest time, in ms, between a call and its write. */
  interval: number;
  /** Most bytes the directory's segments may hold. */
  maxBytes: number;
}

/**
 * The `spool` option: every accepted message is appended to a file in a directory, so that a
 * process that dies (kill -9, OOM) leaves its unsettled messages for the next one to send.
 *
 * Calls stay synchronous: a message joins a pending list, written with the others every `interval`
 * ms (one `write` for all of them). Settled messages are recorded by line number in a companion
 * file; a segment whose messages have all settled is deleted whole, so the spool never copies what
 * it keeps. A lock file holding the process id keeps a second process out. After a failed write
 * (a full or read-only disk) the spool reports it once and steps aside: calls go on in memory.
 */
export class Spool {
  readonly #dir: string;
  readonly #options: SpoolOptions;
  readonly #onError: (error: SpoolError) => void;
  readonly #segments: Segment[] = [];
  /** Where new messages go; absent until the next message. */
  #current: Segment | undefined;
  #nextSegment = 0;
  /** Sequence number of the next message. */
  #seq = 0;
  /** Bytes of the segments still on disk or to be written. */
  #bytes = 0;
  /** Set once a write failed: nothing more is written or read. */
  #broken = false;
  /** Bytes of the lines not written yet. */
  #pendingBytes = 0;
  /** Set once the failure was reported: it is reported once. */
  #reported = false;
  #locked = false;
  readonly #recovered: SpooledMessage[] = [];
  /** The write timer: armed while something waits to be written; unref'd, so it never holds the process. */
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Locks `dir` (making it if needed) and reads what a previous process left there.
   * @throws {SpoolLockedError} when another live process, or another client of this one, holds it.
   * @throws {ConfigError} on a runtime without a file system.
   */
  constructor(dir: string, options: SpoolOptions, onError: (error: SpoolError) => void) {
    if (!HAS_FILE_SYSTEM) {
      throw new ConfigError('spool', 'Expected no `spool` here: this runtime has no file system to keep one in');
    }
    this.#dir = resolvePath(dir);
    this.#options = options;
    this.#onError = onError;
    try {
      makeDir(this.#dir);
      this.#lock();
      this.#recover();
    } catch (error) {
      if (error instanceof SpoolLockedError) throw error;
      // A read-only or full disk: the client works in memory; listeners attached after the constructor hear of it.
      queueMicrotask(() => this.#fail(error));
      this.#broken = true;
    }
  }

  /** Messages a previous process left unsettled, oldest first: the first sequence numbers of this one. */
  recovered(): readonly SpooledMessage[] {
    return this.#recovered;
  }

  /** Whether a message of `bytes` would take the directory past `maxBytes`. */
  full(bytes: number): boolean {
    return !this.#broken && this.#bytes + bytes + 1 > this.#options.maxBytes;
  }

  /**
   * Keeps the next message, `bytes` of JSON and a newline at `chunk[start]` in the client's message
   * store, to be written with the others within `interval` ms, and always before the store reads it
   * again (the client calls {@link write} before every batch it takes).
   */
  add(chunk: Uint8Array, start: number, bytes: number): void {
    const seq = this.#seq++;
    if (this.#broken) return;
    let segment = this.#current;
    if (segment === undefined || segment.bytes + bytes + 1 > SEGMENT_BYTES) {
      segment = this.#open(seq);
    }
    segment.pending.push(chunk, start, bytes + 1);
    segment.count += 1;
    segment.bytes += bytes + 1;
    this.#bytes += bytes + 1;
    this.#pendingBytes += bytes + 1;
    if (this.#pendingBytes >= PENDING_BYTES) this.#write(true);
    else this.#timer ??= this.#arm();
  }

  /** Marks `count` messages from sequence number `start` on as settled (delivered or given up). */
  settle(start: number, count: number): void {
    const end = start + count;
    for (let i = 0; i < this.#segments.length; i++) {
      const segment = this.#segments[i]!;
      const from = Math.max(start, segment.firstSeq);
      const to = Math.min(end, segment.firstSeq + segment.count);
      if (from >= to) continue;
      if (!this.#broken) {
        for (let seq = from; seq < to; seq++) {
          const index = seq - segment.firstSeq;
          segment.pendingAcks.push(segment.lineOf === undefined ? index : segment.lineOf[index]!);
        }
      }
      segment.settled += to - from;
      if (segment.settled === segment.count && this.#retire(segment)) i -= 1;
    }
    if (!this.#broken) this.#timer ??= this.#arm();
  }

  /** Writes what waits, then lets the directory go (removing the lock). */
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#write();
    for (const segment of this.#segments) this.#closeFiles(segment);
    if (this.#locked) {
      this.#locked = false;
      try {
        removeFile(joinPath(this.#dir, LOCK));
      } catch {
        // The next process takes a stale lock over.
      }
    }
  }

  #arm(): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => {
      this.#timer = undefined;
      this.#write();
    }, this.#options.interval);
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  #open(firstSeq: number): Segment {
    const name = String(this.#nextSegment++).padStart(12, '0');
    const segment: Segment = {
      log: joinPath(this.#dir, `${name}.log`),
      acks: joinPath(this.#dir, `${name}.acks`),
      firstSeq,
      lineOf: undefined,
      count: 0,
      settled: 0,
      bytes: 0,
      pending: new Lines(),
      pendingAcks: [],
      logFd: undefined,
      acksFd: undefined,
    };
    this.#segments.push(segment);
    this.#current = segment;
    return segment;
  }

  /** Deletes a settled segment's files (or never writes them); returns true as it leaves the list. */
  #retire(segment: Segment): boolean {
    this.#closeFiles(segment);
    try {
      removeFile(segment.log);
      removeFile(segment.acks);
    } catch (error) {
      this.#fail(error);
      return false;
    }
    this.#segments.splice(this.#segments.indexOf(segment), 1);
    this.#bytes -= segment.bytes;
    if (this.#current === segment) this.#current = undefined;
    return true;
  }

  /**
   * Writes what waits now, ahead of the timer: the client calls it before a batch leaves, so that
   * what is in flight is on disk even when the event loop is then held up (a module loading).
   */
  write(): void {
    this.#write(true);
  }

  /** Writes the pending lines and, unless `linesOnly` (acks can wait for the timer), the pending acks. */
  #write(linesOnly = false): void {
    if (this.#broken || (linesOnly && this.#pendingBytes === 0)) return;
    try {
      for (const segment of this.#segments) {
        if (!segment.pending.empty) {
          segment.logFd ??= openAppend(segment.log);
          appendAll(segment.logFd, segment.pending.runs());
          segment.pending = new Lines();
        }
        // Acks only after their lines: a line recorded settled is always in its file.
        if (!linesOnly && segment.pendingAcks.length > 0) {
          segment.acksFd ??= openAppend(segment.acks);
          appendBytes(segment.acksFd, encodeText(`${segment.pendingAcks.join('\n')}\n`));
          segment.pendingAcks = [];
        }
      }
      this.#pendingBytes = 0;
    } catch (error) {
      this.#fail(error);
    }
  }

  /**
   * Steps aside for good: reported once, nothing more written, the calls kept in memory only. A
   * segment whose calls all settle is still deleted (that takes no room on a full disk), so that
   * the next process does not send again what this one delivered.
   */
  #fail(error: unknown): void {
    const first = !this.#reported;
    this.#broken = true;
    this.#pendingBytes = 0;
    this.#reported = true;
    for (const segment of this.#segments) {
      segment.pending = new Lines();
      segment.pendingAcks = [];
      this.#closeFiles(segment);
    }
    if (first) this.#onError(new SpoolError(this.#dir, error));
  }

  #closeFiles(segment: Segment): void {
    for (const fd of [segment.logFd, segment.acksFd]) {
      if (fd === undefined) continue;
      try {
        closeFile(fd);
      } catch {
        // Closing cannot lose what was written.
      }
    }
    segment.logFd = undefined;
    segment.acksFd = undefined;
  }

  /** Takes the lock file, or over a stale one whose process is gone. */
  #lock(): void {
    const file = joinPath(this.#dir, LOCK);
    for (let attempt = 0; ; attempt++) {
      try {
        createExclusive(file, ownerText());
        this.#locked = true;
        return;
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      const text = readText(file) ?? '';
      const owner = liveOwner(text);
      if (attempt > 0 || owner !== undefined) {
        throw new SpoolLockedError(this.#dir, owner ?? Number.parseInt(text, 10));
      }
      try {
        unlinkFile(file);
      } catch (error) {
        // Another process took the stale lock over first: the next attempt finds its pid.
        if (errorCode(error) !== 'ENOENT') throw error;
      }
    }
  }

  /** Reads every segment left behind: their unsettled lines are recovered, settled segments deleted. */
  #recover(): void {
    const names = listFiles(this.#dir);
    const ids = names.flatMap((name) => SEGMENT_NAME.exec(name)?.[1] ?? []).sort();
    for (const name of names) {
      const id = ACKS_NAME.exec(name)?.[1];
      // An acks file without its segment is all that is left of a segment being deleted.
      if (id !== undefined && !ids.includes(id)) removeFile(joinPath(this.#dir, name));
    }
    for (const id of ids) {
      const log = joinPath(this.#dir, `${id}.log`);
      const acks = joinPath(this.#dir, `${id}.acks`);
      const text = readText(log) ?? '';
      // A process killed during a write, or a disk that filled during one, may leave a file's last
      // line unfinished. In the log it was never accepted whole; in the acks, "3" may be the start
      // of "35", and taking it for 3 would drop a call never sent.
      const acksText = readText(acks) ?? '';
      const settled = new Set(wholeLines(acksText).filter(Boolean).map(Number));
      const lines = wholeLines(text);
      const lineOf: number[] = [];
      lines.forEach((line, index) => {
        if (settled.has(index) || !isJson(line)) return;
        lineOf.push(index);
        this.#recovered.push({ json: line, bytes: byteLength(line) });
      });
      this.#nextSegment = Number(id) + 1;
      if (lineOf.length === 0) {
        removeFile(log);
        removeFile(acks);
        continue;
      }
      const bytes = byteLength(text);
      // The unfinished line is cut off before this process appends its own settlements: after "99",
      // its "2" would read as 992, and a newline alone would make 99 of it.
      const whole = acksText.lastIndexOf('\n') + 1; // digits and newlines: characters are bytes
      if (whole < acksText.length) truncateFile(acks, whole);
      this.#segments.push({ log, acks, firstSeq: this.#seq, lineOf, count: lineOf.length, settled: 0, bytes, pending: new Lines(), pendingAcks: [], logFd: undefined, acksFd: undefined });
      this.#seq += lineOf.length;
      this.#bytes += bytes;
    }
  }
}

/** The lines of `text` that end in a newline. */
function wholeLines(text: string): string[] {
  return text.split('\n').slice(0, -1);
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
