import { log } from './log.js';

type Listener<T> = (payload: T) => void;

/**
 * A minimal typed event emitter. Unlike Node's EventEmitter it never throws: an `error` without
 * listeners is only logged, and a listener that throws cannot break delivery.
 */
export class Emitter<Events extends object> {
  #listeners = new Map<keyof Events, Set<Listener<never>>>();

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

  /** Calls every listener of `type`; returns whether there was one. */
  emit<K extends keyof Events>(type: K, payload: Events[K]): boolean {
    const set = this.#listeners.get(type);
    if (set === undefined || set.size === 0) return false;
    for (const listener of [...set]) {
      try {
        (listener as Listener<Events[K]>)(payload);
      } catch (error) {
        log('a %s listener threw: %O', type, error);
      }
    }
    return true;
  }
}
