import type { ServerResponse } from 'node:http';
import { messageOf } from 'batched-analytics/internal';
import { sendJson } from './http.js';

/** What `/readyz` answers. */
export type ReadyState = { ready: true } | { ready: false; reason: string };

/**
 * Whether a load balancer should send the collector traffic (`GET /readyz`): not while the store is
 * not open yet, nor when it does not answer, nor once the collector is stopping. `GET /healthz` is
 * the process's own liveness: 200 whenever it answers at all. Neither needs credentials, and
 * neither shows any data: a reason names what is wrong, never a message or a secret.
 */
export class Readiness {
  #phase: { name: 'starting'; reason: string } | { name: 'serving'; probe: () => Promise<void> } | { name: 'stopping' } = {
    name: 'starting',
    reason: 'starting: opening the store',
  };
  /** The probe in progress: probes that arrive meanwhile share it rather than load the store each. */
  #probing: Promise<ReadyState> | undefined;

  /** The store is not open yet, for this reason. */
  starting(reason: string): void {
    if (this.#phase.name === 'starting') this.#phase = { name: 'starting', reason: `starting: ${reason}` };
  }

  /** The store is open: readiness now asks it (the probe rejects when it does not answer). */
  serving(probe: () => Promise<void>): void {
    if (this.#phase.name === 'starting') this.#phase = { name: 'serving', probe };
  }

  /** The collector is stopping: not ready from now on, whatever the store says. */
  stopping(): void {
    this.#phase = { name: 'stopping' };
  }

  check(): Promise<ReadyState> {
    const phase = this.#phase;
    if (phase.name === 'starting') return Promise.resolve({ ready: false, reason: phase.reason });
    if (phase.name === 'stopping') return Promise.resolve({ ready: false, reason: 'stopping' });
    this.#probing ??= phase
      .probe()
      .then(
        (): ReadyState => ({ ready: true }),
        (error: unknown): ReadyState => ({ ready: false, reason: `the store does not answer: ${messageOf(error)}` }),
      )
      .finally(() => (this.#probing = undefined));
    // Stopping may have begun while the store answered.
    return this.#probing.then((state) => (this.#phase.name === 'stopping' ? { ready: false, reason: 'stopping' } : state));
  }
}

const NO_STORE = { 'cache-control': 'no-store' };

/** `GET /healthz`: the process serves. */
export function sendHealth(res: ServerResponse): void {
  sendJson(res, 200, { status: 'ok' }, NO_STORE);
}

/** `GET /readyz`: 200 when ready, else 503 with the reason. */
export async function sendReadiness(res: ServerResponse, readiness: Readiness): Promise<void> {
  const state = await readiness.check();
  sendJson(res, state.ready ? 200 : 503, state, NO_STORE);
}
