import { log } from '../platform/log.js';

type Listener<T> = (payload: T) => void;

/**
 * A minimal typed event emitter. Unlike Node's EventEmitter it never throws: an `error` without
 * listeners is only logged, and a listener that throws cannot break delivery.
 */
export class Emitter<Events extends object> {
  /**
   * Each type's listeners, replaced (never changed) when one is added or removed: an emit calls
   * the ones there were when it started without copying them, and most events are emitted far
   * more often than listeners come and go (a few per message on a busy collector).
   */
  #listeners = new Map<keyof Events, readonly Listener<never>[]>();
  readonly #onListenerError: (type: keyof Events, error: unknown) => void;

  /** @param onListenerError told when a listener throws; by default it is logged under `DEBUG=analytics`. */
  constructor(onListenerError: (type: keyof Events, error: unknown) => void = (type, error) => log('a %s listener threw: %O', type, error)) {
    this.#onListenerError = onListenerError;
  }

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof Events>(type: K, listener: Listener<Events[K]>): () => void {
    const added = listener as Listener<never>;
    const listeners = this.#listeners.get(type) ?? [];
    if (!listeners.includes(added)) this.#listeners.set(type, [...listeners, added]);
    return () => {
      const now = this.#listeners.get(type) ?? [];
      if (now.includes(added)) this.#listeners.set(type, now.filter((kept) => kept !== added));
    };
  }

  /** Whether `type` has a listener: emitters skip building a payload nobody would get. */
  has(type: keyof Events): boolean {
    return (this.#listeners.get(type)?.length ?? 0) > 0;
  }

  /** Calls every listener of `type`; returns whether there was one. */
  emit<K extends keyof Events>(type: K, payload: Events[K]): boolean {
    const listeners = this.#listeners.get(type);
    if (listeners === undefined || listeners.length === 0) return false;
    for (const listener of listeners) {
      try {
        (listener as Listener<Events[K]>)(payload);
      } catch (error) {
        this.#onListenerError(type, error);
      }
    }
    return true;
  }
}
