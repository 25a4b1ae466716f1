/** What {@link OldestFirst} needs of a `Map` or a `Set`. */
interface KeyedCollection<K> {
  readonly size: number;
  keys(): IterableIterator<K>;
  delete(key: K): boolean;
}

/**
 * Deletes the oldest entries of a `Map` or a `Set` (by insertion: one deleted and added again is
 * new) beyond a limit, in constant time per entry. `collection.keys().next()` finds the oldest
 * too, but each new iterator starts at the front of V8's table and steps over every entry deleted
 * there since the table was last rebuilt: with 10,000 kept, about 5 µs per deletion. The one
 * iterator kept here steps over each only once; an iterator of a `Map` or `Set` visits what was
 * added after it was made and skips what was deleted, so it always stands at the oldest entry left.
 */
export class OldestFirst<K> {
  readonly #collection: KeyedCollection<K>;
  readonly #keys: Iterator<K>;

  constructor(collection: KeyedCollection<K>) {
    this.#collection = collection;
    this.#keys = collection.keys();
  }

  /** Deletes the oldest entries until at most `limit` are left. */
  trim(limit: number): void {
    while (this.#collection.size > limit) this.#collection.delete(this.#keys.next().value as K);
  }
}
