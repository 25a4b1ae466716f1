/**
 * A min-heap of items by due time: O(log n) to add, and to take the next due one. The journal
 * keeps its deliveries' next attempts here (new ones due at once, retries and lapsed leases later),
 * so claiming never scans a backlog of thousands.
 *
 * Three parallel arrays rather than a node per entry: arrays of numbers only hold them unboxed, so
 * an entry costs no object and no boxed time (each delivery is queued two or three times, and a
 * backlog of 100,000 held about 200,000 nodes, 12 MB).
 */
export class DueQueue<T> {
  /** When each is due (ms since the epoch). */
  #due: number[] = [];
  /** Acceptance order: among equal times, the smaller first. */
  #order: number[] = [];
  #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  /** Replaces every item with these, e.g. to drop items that no longer count. */
  reset(items: Iterable<{ item: T; due: number; order: number }>): void {
    this.#due = [];
    this.#order = [];
    this.#items = [];
    for (const { item, due, order } of items) this.add(item, due, order);
  }

  /** When the first item is due; undefined when empty. */
  get nextDue(): number | undefined {
    return this.#due[0];
  }

  add(item: T, due: number, order: number): void {
    let index = this.#items.length;
    this.#due.push(due);
    this.#order.push(order);
    this.#items.push(item);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.#before(index, parent)) break;
      this.#swap(index, parent);
      index = parent;
    }
  }

  /** Removes and returns the item due first, if it is due at `now`. */
  takeDue(now: number): { item: T; due: number } | undefined {
    const due = this.#due[0];
    if (due === undefined || due > now) return undefined;
    const item = this.#items[0]!;
    const last = this.#items.length - 1;
    this.#swap(0, last);
    this.#due.pop();
    this.#order.pop();
    this.#items.pop();
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let first = index;
      if (left < last && this.#before(left, first)) first = left;
      if (right < last && this.#before(right, first)) first = right;
      if (first === index) break;
      this.#swap(index, first);
      index = first;
    }
    return { item, due };
  }

  #before(a: number, b: number): boolean {
    const due = this.#due;
    return due[a]! < due[b]! || (due[a] === due[b] && this.#order[a]! < this.#order[b]!);
  }

  #swap(a: number, b: number): void {
    const due = this.#due;
    const order = this.#order;
    const items = this.#items;
    const at = due[a]!;
    due[a] = due[b]!;
    due[b] = at;
    const place = order[a]!;
    order[a] = order[b]!;
    order[b] = place;
    const item = items[a]!;
    items[a] = items[b]!;
    items[b] = item;
  }
}
