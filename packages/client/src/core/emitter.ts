import { log } from '../platform/log.js';

type Listener<T> = (payload: T) => void;

/**
 * A minimal typed event emitter. Unlike Node's EventEmitter it never throws: an `error` without
 * listeners is only logged, and a listener that throws cannot break delivery.
 */
export class Emitter<Events extends object> {
  #listeners = new Map<keyof Events, Set<Listener<never>>>();
  readonly #onListenerError: (type: keyof Events, error: unknown) => void;

  /** @param onListenerError told when a listener throws; by default it is logged under `DEBUG=analytics`. */
  constructor(onListenerError: (type: keyof Events, error: unknown) => void = (type, error) => log('a %s listener threw: %O', type, error)) {
    this.#onListenerError = onListenerError;
  }

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof Events>(type: K, listener: Listener<Events[K]>): () => void {
    let set = this.#listeners.get(type);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    set.add(listener as Listener<never>);
    return () => {
      set.delete(listener as Listener<never>);
    };
  }

  /** Whether `type` has a listener: emitters skip building a payload nobody would get. */
  has(type: keyof Events): boolean {
    return (this.#listeners.get(type)?.size ?? 0) > 0;
  }

  /** Calls every listener of `type`; returns whether there was one. */
  emit<K extends keyof Events>(type: K, payload: Events[K]): boolean {
    const set = this.#listeners.get(type);
    if (set === undefined || set.size === 0) return false;
    for (const listener of [...set]) {
      try {
        (listener as Listener<Events[K]>)(payload);
      } catch (error) {
        this.#onListenerError(type, error);
      }
    }
    return true;
  }
}
