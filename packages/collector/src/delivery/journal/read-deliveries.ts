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

/**
 * Buffers of READ_MOST bytes that reads are made into and given back once used. A fresh buffer
 * per read is garbage the moment it is used, but outside the heap, where V8 counts it late: a
 * drain claiming thousands of deliveries a second, and copying segments forward for the few
 * deliveries left in them, held 70 to 80 MB of them.
 */
const scratch: Buffer[] = [];
/** Scratch buffers kept for the next reads: claims and copies are read one at a time, lookups seldom beside them. */
const SCRATCH_KEPT = 2;

/**
 * Reads the bytes of each of `places` (neighbours in one read, one read at a time) and hands them
 * to `use` with the place's position in `places`: the bytes are valid only until `use` returns.
 */
export async function readPlaces(places: readonly Place[], use: (bytes: Buffer, index: number) => void): Promise<void> {
  const byPlace = places.map((_, index) => index).sort((a, b) => places[a]!.segment.number - places[b]!.segment.number || places[a]!.offset - places[b]!.offset);
  const runs: number[][] = [];
  let run: number[] = [];
  for (const index of byPlace) {
    const place = places[index]!;
    const first = places[run[0]!];
    const last = places[run.at(-1)!];
    if (first !== undefined && (place.segment !== first.segment || place.offset - (last!.offset + last!.length) > READ_GAP || place.offset + place.length - first.offset > READ_MOST)) {
      runs.push(run);
      run = [];
    }
    run.push(index);
  }
  if (run.length > 0) runs.push(run);
  const into = scratch.pop() ?? Buffer.allocUnsafe(READ_MOST);
  try {
    for (const indexes of runs) {
      const first = places[indexes[0]!]!;
      const last = places[indexes.at(-1)!]!;
      const from = first.offset;
      const bytes = await first.segment.read(from, last.offset + last.length - from, into);
      for (const index of indexes) {
        const { offset, length } = places[index]!;
        use(bytes.subarray(offset - from, offset - from + length), index);
      }
    }
  } finally {
    if (scratch.length < SCRATCH_KEPT) scratch.push(into);
  }
}

/** Reads claimed deliveries from their segments. */
export async function readDeliveries(entries: readonly Place[]): Promise<Delivery[]> {
  const found = new Array<Delivery>(entries.length);
  await readPlaces(entries, (bytes, index) => {
    found[index] = JSON.parse(bytes.toString('utf8')) as Delivery;
  });
  return found;
}
