import type { Delivery } from '../store.js';
import type { Segment } from './segment.js';

/** Deliveries claimed together that lie at most this far apart are read in one go. */
const READ_GAP = 16 * 1024;
/** The most one read for a claim takes in. */
const READ_MOST = 1024 * 1024;

/** Where a delivery's bytes lie in the journal. */
export interface Place {
  segment: Segment;
  offset: number;
  length: number;
}

/** Reads claimed deliveries from their segments, neighbours in one read. */
export async function readDeliveries(entries: readonly Place[]): Promise<Delivery[]> {
  const found = new Array<Delivery>(entries.length);
  const byPlace = entries.map((_, index) => index).sort((a, b) => entries[a]!.segment.number - entries[b]!.segment.number || entries[a]!.offset - entries[b]!.offset);
  const reads: Promise<void>[] = [];
  let run: Place[] = [];
  let runOf: number[] = [];
  const read = () => {
    if (run.length === 0) return;
    const [items, indexes] = [run, runOf];
    const from = items[0]!.offset;
    const to = items.at(-1)!.offset + items.at(-1)!.length;
    reads.push(
      items[0]!.segment.read(from, to - from).then((bytes) => {
        items.forEach((entry, i) => {
          found[indexes[i]!] = JSON.parse(bytes.toString('utf8', entry.offset - from, entry.offset - from + entry.length)) as Delivery;
        });
      }),
    );
    run = [];
    runOf = [];
  };
  for (const index of byPlace) {
    const entry = entries[index]!;
    const first = run[0];
    const last = run.at(-1);
    if (first !== undefined && (entry.segment !== first.segment || entry.offset - (last!.offset + last!.length) > READ_GAP || entry.offset + entry.length - first.offset > READ_MOST)) read();
    run.push(entry);
    runOf.push(index);
  }
  read();
  await Promise.all(reads);
  return found;
}
