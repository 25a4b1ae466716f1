import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/** The least the heap may grow past what is live: below it, full collections follow one another. */
const MIN_GROWTH = 10;
/** A full collection is reported as one of these: a collection in one pause, or one marked in steps. */
const FULL = new Set<number | undefined>([constants.NODE_PERFORMANCE_GC_MAJOR, constants.NODE_PERFORMANCE_GC_INCREMENTAL]);
/** In percent; V8's own policy grows the heap at most this much, choosing less when it can. */
const V8_MAX_GROWTH = 300;

/**
 * Keeps the JavaScript heap near `targetMb` between full garbage collections, as Go's
 * `GOMEMLIMIT` does: after each full collection the heap may grow by what is left up to the
 * target (at least 10 % of what is live), and where that leaves room for V8's own policy, V8
 * decides. Soft: a live set beyond the target still gets its memory. V8's own policy suits short
 * scripts; in a server taking messages at full speed it lets the heap reach four times what is
 * live between collections. Process-wide: the growth is a V8 flag, read at each collection (unlike
 * `--max-old-space-size`, read once at start), so only `serve`, which owns its process, calls this.
 * @returns a function that stops, giving the choice back to V8.
 */
export function keepHeapNear(targetMb: number): () => void {
  const target = targetMb * 1024 * 1024;
  let growth = 0;
  const grow = (percent: number) => {
    if (percent === growth) return;
    growth = percent;
    setFlagsFromString(`--heap-growing-percent=${percent}`);
  };
  const observer = new PerformanceObserver((list) => {
    if (!list.getEntries().some((entry) => FULL.has((entry as { detail?: { kind?: number } }).detail?.kind))) return;
    // Read a moment after the collection: what is live then, near enough.
    const room = Math.floor((target / getHeapStatistics().used_heap_size - 1) * 100);
    grow(room >= V8_MAX_GROWTH ? 0 : Math.max(MIN_GROWTH, room));
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    grow(0);
  };
}
