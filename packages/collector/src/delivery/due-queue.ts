/** An item in a {@link DueQueue}: handed out once `due` (ms since the epoch) has come, oldest `order` first among equals. */
interface Node<T> {
  due: number;
  order: number;
  item: T;
}

/**
 * A min-heap of items by due time: O(log n) to add, and to take the next due one. The journal
 * keeps its deliveries' next attempts here (new ones due at once, retries and lapsed leases later),
 * so claiming never scans a backlog of thousands.
 */
export class DueQueue<T> {
  readonly #heap: Node<T>[] = [];

  get size(): number {
    return this.#heap.length;
  }

  /** Replaces every item with these, e.g. to drop items that no longer count. */
  reset(items: Iterable<{ item: T; due: number; order: number }>): void {
    this.#heap.length = 0;
    for (const { item, due, order } of items) this.add(item, due, order);
  }

  /** When the first item is due; undefined when empty. */
  get nextDue(): number | undefined {
    return this.#heap[0]?.due;
  }

  add(item: T, due: number, order: number): void {
    const heap = this.#heap;
    heap.push({ due, order, item });
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(heap[index]!, heap[parent]!)) break;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  /** Removes and returns the item due first, if it is due at `now`. */
  takeDue(now: number): { item: T; due: number } | undefined {
    const heap = this.#heap;
    const top = heap[0];
    if (top === undefined || top.due > now) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        const right = left + 1;
        let first = index;
        if (left < heap.length && before(heap[left]!, heap[first]!)) first = left;
        if (right < heap.length && before(heap[right]!, heap[first]!)) first = right;
        if (first === index) break;
        [heap[index], heap[first]] = [heap[first]!, heap[index]!];
        index = first;
      }
    }
    return { item: top.item, due: top.due };
  }
}

function before<T>(a: Node<T>, b: Node<T>): boolean {
  return a.due < b.due || (a.due === b.due && a.order < b.order);
}
