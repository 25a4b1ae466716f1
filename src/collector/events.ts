import type { ServerResponse } from 'node:http';

/** Where a webhook stands with one message. */
export type WebhookStatus = 'pending' | 'delivered' | 'retrying' | 'failed';

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
  /** How it arrived: a tracking call, an audience sync, a deletion request, or the journal at start. */
  origin: 'api' | 'audience' | 'deletion' | 'replay';
  message: Record<string, unknown>;
  routes: RouteView[];
  webhooks: WebhookView[];
}

/** Interval between SSE comments that keep idle connections (and proxies) from timing out, in ms. */
const HEARTBEAT = 15_000;

/**
 * The live debugger's event hub: keeps the latest events and streams every change to the pages
 * watching, as Server-Sent Events (one `data:` line of JSON with the whole updated event).
 */
export class EventHub {
  readonly #limit: number;
  readonly #events = new Map<string, EventView>();
  readonly #clients = new Set<ServerResponse>();
  /** Runs only while a page is connected. */
  #heartbeat: NodeJS.Timeout | undefined;

  /** @param limit events kept for a page that connects later; older ones are forgotten. */
  constructor(limit = 200) {
    this.#limit = limit;
  }

  /** Records a new event and streams it. */
  add(view: EventView): void {
    this.#events.set(view.id, view);
    if (this.#events.size > this.#limit) this.#events.delete(this.#events.keys().next().value!);
    this.#broadcast(view);
  }

  /** Changes one receiver's view of an event (if still kept) and streams the event. */
  updateWebhook(id: string, index: number, change: Partial<WebhookView>): void {
    const view = this.#events.get(id);
    const webhook = view?.webhooks[index];
    if (view === undefined || webhook === undefined) return;
    Object.assign(webhook, change);
    this.#broadcast(view);
  }

  /** The kept view of an event. */
  get(id: string): EventView | undefined {
    return this.#events.get(id);
  }

  /** Turns a response into an event stream: the kept events first, then every change. */
  attach(res: ServerResponse, headers: Readonly<Record<string, string>> = {}): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', ...headers });
    res.write('retry: 1000\n\n');
    for (const view of this.#events.values()) res.write(frame(view));
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
