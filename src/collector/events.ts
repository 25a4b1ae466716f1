import type { ServerResponse } from 'node:http';

import type { PreparedWebhook } from '../webhooks/prepared.js';

/**
 * Where a webhook stands with one message. `skipped`: another URL accepted the message first, so
 * this one was not needed (and is not retried).
 */
export type WebhookStatus = 'pending' | 'delivered' | 'retrying' | 'failed' | 'skipped';

/** One receiver's view of one message, as the live debugger shows it. */
export interface WebhookView {
  /** The receiver's URL without credentials or query. */
  url: string;
  status: WebhookStatus;
  /** Requests made to this receiver so far. */
  attempts: number;
  /** The latest response status; absent when no response came. */
  httpStatus?: number;
  /** Why the latest request failed, or why the receiver is no longer asked. */
  note?: string;
  /** While `retrying`: when the next attempt starts (ISO 8601), for the page's countdown. */
  nextAttemptAt?: string;
}

/** One request to one receiver, as the detail view lists it. */
export interface AttemptView {
  /** When it ended (ISO 8601). */
  at: string;
  /** Which of the event's `webhooks`. */
  webhook: number;
  /** The delivery's attempt it belonged to, from 1. */
  attempt: number;
  status?: number;
  durationMs: number;
  error?: string;
}

/** Whether a message went to a destination, and why not when it did not. */
export interface RouteView {
  destination: string;
  forwarded: boolean;
  reason?: string;
}

/** One incoming event (or audience identify, or deletion) and its fate. */
export interface EventView {
  id: string;
  /** ISO 8601; when the collector accepted it (or replayed it after a restart). */
  receivedAt: string;
  source: string;
  /**
   * How it arrived: a tracking call, an audience sync, a deletion request, the journal at start
   * (`replay`), or a redelivery asked for from the page or `POST /v1/deliveries/:id/replay`.
   */
  origin: 'api' | 'audience' | 'deletion' | 'replay' | 'redelivery';
  /** For a redelivery: the event it sends again. */
  replayOf?: string;
  message: Record<string, unknown>;
  routes: RouteView[];
  webhooks: WebhookView[];
  /** Every request made for it, oldest first. */
  attempts: AttemptView[];
}

/** An event and what the detail view and a redelivery need besides: the webhook as it is sent. */
interface Kept {
  view: EventView;
  webhook: PreparedWebhook | undefined;
}

/** How many of the latest events the live debugger keeps (for pages that connect later, details, redelivery). */
export const EVENTS_KEPT = 200;

/** Interval between SSE comments that keep idle connections (and proxies) from timing out, in ms. */
const HEARTBEAT = 15_000;

/**
 * The live debugger's event hub: keeps the latest events and streams every change to the pages
 * watching, as Server-Sent Events (one `data:` line of JSON with the whole updated event).
 */
export class EventHub {
  readonly #limit: number;
  readonly #events = new Map<string, Kept>();
  readonly #clients = new Set<ServerResponse>();
  /** Runs only while a page is connected. */
  #heartbeat: NodeJS.Timeout | undefined;

  /** @param limit events kept for a page that connects later; older ones are forgotten. */
  constructor(limit = EVENTS_KEPT) {
    this.#limit = limit;
  }

  /** Records a new event, with the webhook it is sent as when it is forwarded, and streams it. */
  add(view: EventView, webhook?: PreparedWebhook): void {
    this.#events.set(view.id, { view, webhook });
    if (this.#events.size > this.#limit) this.#events.delete(this.#events.keys().next().value!);
    this.#broadcast(view);
  }

  /** Changes one receiver's view of an event (if still kept) and streams the event. */
  updateWebhook(id: string, index: number, change: Partial<WebhookView>): void {
    const view = this.#events.get(id)?.view;
    const webhook = view?.webhooks[index];
    if (view === undefined || webhook === undefined) return;
    Object.assign(webhook, change);
    this.#broadcast(view);
  }

  /** Adds a request to an event's list (if still kept); the caller's `updateWebhook` streams it. */
  recordAttempt(id: string, attempt: AttemptView): void {
    this.#events.get(id)?.view.attempts.push(attempt);
  }

  /** The kept view of an event. */
  get(id: string): EventView | undefined {
    return this.#events.get(id)?.view;
  }

  /** The webhook a kept event is sent as; absent when it was not forwarded or is no longer kept. */
  webhookOf(id: string): PreparedWebhook | undefined {
    return this.#events.get(id)?.webhook;
  }

  /** Turns a response into an event stream: the kept events first, then every change. */
  attach(res: ServerResponse, headers: Readonly<Record<string, string>> = {}): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', ...headers });
    res.write('retry: 1000\n\n');
    for (const { view } of this.#events.values()) res.write(frame(view));
    this.#clients.add(res);
    res.on('close', () => {
      this.#clients.delete(res);
      if (this.#clients.size === 0) this.#stopHeartbeat();
    });
    this.#heartbeat ??= setInterval(() => {
      for (const client of this.#clients) client.write(': keep-alive\n\n');
    }, HEARTBEAT).unref();
  }

  /** Ends every stream. */
  close(): void {
    for (const client of this.#clients) client.end();
    this.#clients.clear();
    this.#stopHeartbeat();
  }

  #broadcast(view: EventView): void {
    if (this.#clients.size === 0) return;
    const text = frame(view);
    for (const client of this.#clients) client.write(text);
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }
}

function frame(view: EventView): string {
  // JSON.stringify escapes line breaks, so the event is one `data:` line.
  return `data: ${JSON.stringify(view)}\n\n`;
}
