import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';

/** The least the heap may grow past what is live: below it, full collections follow one another. */
const MIN_GROWTH = 10;
/** A full collection is reported as one of these: a collection in one pause, or one marked in steps. */
const FULL = new Set<number | undefined>([constants.NODE_PERFORMANCE_GC_MAJOR, constants.NODE_PERFORMANCE_GC_INCREMENTAL]);
/** In percent; V8's own policy grows the heap at most this much, choosing less when it can. */
const V8_MAX_GROWTH = 300;
/**
 * The young generation (V8's new space, where every object starts) doubles only while it stays
 * within this share of the target: 32 MB of the default 192, the most Node 20 lets it have. V8
 * doubles it after a collection in which much survived, up to a limit it sets at start from the
 * machine's memory: on Node 24 that is 128 MB, which alone kept the collector 100 MB above its
 * 300 MB in the outage soak. Its growth factor is read at each collection, unlike its limit. (Node
 * 24's V8 also grows it in smaller steps between full collections, which this leaves alone.)
 */
const YOUNG_SHARE = 6;
/** V8's own growth factor of the young generation; 1 keeps it the size it is. */
const YOUNG_GROWTH = 2;

/**
 * Keeps the JavaScript heap near `targetMb` between full garbage collections, as Go's
 * `GOMEMLIMIT` does: after each full collection the heap may grow by what is left up to the
 * target (at least 10 % of what is live), and where that leaves room for V8's own policy, V8
 * decides. The young generation grows only while it stays within a sixth of the target. Soft: a
 * live set beyond the target still gets its memory. V8's own policy suits short scripts; in a
 * server taking messages at full speed it lets the heap reach four times what is live between
 * collections. Process-wide: both growths are V8 flags, read at each collection (unlike
 * `--max-old-space-size` and `--max-semi-space-size`, read once at start), so only `serve`, which
 * owns its process, calls this.
 * @returns a function that stops, giving the choice back to V8.
 */
export function keepHeapNear(targetMb: number): () => void {
  const target = targetMb * 1024 * 1024;
  const grow = v8Setting('heap-growing-percent', 0);
  const growYoung = v8Setting('semi-space-growth-factor', YOUNG_GROWTH);
  // Doubling is the only growth V8 knows: allowed while the doubled size is within the share.
  const keepYoung = () => growYoung(YOUNG_GROWTH * youngSize() <= target / YOUNG_SHARE ? YOUNG_GROWTH : 1);
  keepYoung();
  const observer = new PerformanceObserver((list) => {
    keepYoung();
    if (!list.getEntries().some((entry) => FULL.has((entry as { detail?: { kind?: number } }).detail?.kind))) return;
    // Read a moment after the collection: what is live then, near enough.
    const room = Math.floor((target / getHeapStatistics().used_heap_size - 1) * 100);
    grow(room >= V8_MAX_GROWTH ? 0 : Math.max(MIN_GROWTH, room));
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    grow(0);
    growYoung(YOUNG_GROWTH);
  };
}

/** Sets the numeric V8 flag `name` (its value now: `initial`), each time only when the value changes. */
function v8Setting(name: string, initial: number): (value: number) => void {
  let current = initial;
  return (value) => {
    if (value === current) return;
    current = value;
    setFlagsFromString(`--${name}=${value}`);
  };
}

/** The young generation's size in bytes: both of its halves, as V8 reports its new space. */
function youngSize(): number {
  return getHeapSpaceStatistics().find(({ space_name }) => space_name === 'new_space')?.space_size ?? 0;
}
