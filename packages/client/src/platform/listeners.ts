import { setMaxListeners } from 'node:events';

/**
 * Raises Node's leak warning threshold of an AbortSignal that many requests listen to at once.
 * `listeners.web.ts`, its twin for runtimes without `node:events`, does nothing: they have no such warning.
 */
export function allowListeners(count: number, signal: AbortSignal): void {
  setMaxListeners(count, signal);
}
