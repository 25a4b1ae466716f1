import type { ServerResponse } from 'node:http';
import { log, OldestFirst } from 'batched-analytics/internal';
import type { EventHistory, HistoryEntry } from './history.js';
import { absorb, type EventView, messageStatus, SETTLED, type WebhookView } from './views.js';

/** Limits of the {@link EventHub}. */
export interface HubOptions {
  /** Events a page gets when it connects; older ones it loads on demand (`GET /history`). */
  live: number;
  /** Events kept for paging back, the detail view and redelivery (in memory and in the history). */
  retention: number;
  /** Where settled events outlive the process; absent: memory only. */
  history?: EventHistory | undefined;
}

export const HUB_DEFAULTS: Readonly<HubOptions> = Object.freeze({ live: 200, retention: 10_000 });

/** Interval between SSE comments that keep idle connections (and proxies) from timing out, in ms. */
const HEARTBEAT = 15_000;

/**
 * Bytes a page's stream may have waiting to be sent before the page is disconnected: a page that
 * stopped reading would otherwise hold every later event in memory. Its `EventSource` reconnects a
 * second later and starts again from the latest `live` events. More than those 200 events take at
 * the largest message size, so a page that reads is never cut while it catches up.
 * @default 8388608 (8 MiB)
 */
export const PAGE_BUFFER_LIMIT = 8 * 1024 * 1024;

/**
 * The live debugger's event hub: keeps the latest events and streams every change to the pages
 * watching, as Server-Sent Events (one `data:` line of JSON with the whole updated event).
 */
export class EventHub {
  readonly #options: HubOptions;
  /** Oldest first, at most `retention`. */
  readonly #events = new Map<string, HistoryEntry>();
  readonly #oldest = new OldestFirst(this.#events);
  readonly #clients = new Set<ServerResponse>();
  /** States appended to the history since it was last compacted. */
  #appended = 0;
  /** The latest `arrived` given out. */
  #arrived = 0;
  /** Runs only while a page is connected. */
  #heartbeat: NodeJS.Timeout | undefined;
  /** Stops following the other processes' events; set while a page is connected to a shared history. */
  #unfollow: (() => void) | undefined;

  constructor(options: Partial<HubOptions> = {}) {
    this.#options = { ...HUB_DEFAULTS, ...options };
  }

  /** Takes back what the history kept from earlier runs (before any new event). */
  async load(): Promise<void> {
    for (const entry of (await this.#options.history?.open()) ?? []) this.#keep(entry);
  }

  /** Records a new event and streams it. */
  add(view: EventView): void {
    view.status = messageStatus(view.webhooks);
    this.#events.delete(view.id);
    // Strictly increasing: the events of one batch, accepted in the same millisecond, keep their order.
    this.#arrived = Math.max(this.#arrived + 1, Date.now() * 1_000);
    const entry: HistoryEntry = { view, arrived: this.#arrived };
    this.#keep(entry);
    this.#changed(entry);
  }

  /** Changes one receiver's view of an event (if still kept) and streams the event. */
  updateWebhook(id: string, index: number, change: Partial<WebhookView>): void {
    const entry = this.#events.get(id);
    const webhook = entry?.view.webhooks[index];
    if (entry === undefined || webhook === undefined) return;
    Object.assign(webhook, change);
    entry.view.status = messageStatus(entry.view.webhooks);
    this.#changed(entry);
  }

  /** The kept view of an event. */
  get(id: string): EventView | undefined {
    return this.#events.get(id)?.view;
  }

  /**
   * Up to `limit` kept events older than `before` (an event id), or the newest without it, newest
   * first, and whether more are kept.
   */
  older(before: string | undefined, limit: number): { events: EventView[]; more: boolean } {
    const ids = [...this.#events.keys()];
    const end = before === undefined ? ids.length : ids.indexOf(before);
    if (end === -1) return { events: [], more: false };
    const start = Math.max(0, end - limit);
    return { events: ids.slice(start, end).reverse().map((id) => this.#events.get(id)!.view), more: start > 0 };
  }

  /**
   * Turns a response into an event stream: the latest `live` events first, then every change,
   * until `until` (ms since the epoch: when the credentials it was opened with end), if given.
   */
  attach(res: ServerResponse, headers: Readonly<Record<string, string>> = {}, until?: number): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', ...headers });
    res.write('retry: 1000\n\n');
    for (const { view } of [...this.#events.values()].slice(-this.#options.live)) res.write(frame(view));
    this.#clients.add(res);
    // The page reconnects at once, and is asked for credentials again.
    const ending = until === undefined ? undefined : setTimeout(() => res.end(), Math.max(0, until - Date.now())).unref();
    res.on('close', () => {
      clearTimeout(ending);
      this.#clients.delete(res);
      if (this.#clients.size === 0) this.#stopWatching();
    });
    this.#heartbeat ??= setInterval(() => {
      for (const client of this.#clients) this.#send(client, ': keep-alive\n\n');
    }, HEARTBEAT).unref();
    // Other processes' events are read only while someone watches: nobody else needs them live.
    this.#unfollow ??= this.#options.history?.follow?.(this.#options.live, (entries) => this.#merge(entries));
  }

  /** Ends every stream now (the tokens changed): each page reconnects, showing its credentials again. */
  endStreams(): void {
    for (const client of this.#clients) client.end();
  }

  /** Ends every stream; resolves once the history has written what it buffered. Can be called again. */
  async close(): Promise<void> {
    for (const client of this.#clients) client.end();
    this.#clients.clear();
    this.#stopWatching();
    await this.#options.history?.close();
  }

  #keep(entry: HistoryEntry): void {
    this.#events.set(entry.view.id, entry);
    this.#oldest.trim(this.#options.retention);
  }

  #changed(entry: HistoryEntry): void {
    const view = entry.view;
    this.#broadcast(view);
    const history = this.#options.history;
    // Once per state, and not a late answer from a URL that was not needed (the message stays
    // delivered). In a history of this process's own, an event is recorded when it ends. In one
    // shared with other processes, every state is, for their pages: a new event too, since another
    // process may claim and show it knowing neither how it arrived nor when, and every retry, for
    // its time of the next attempt.
    if (history === undefined || (history.follow === undefined && !SETTLED.has(view.status))) return;
    const state = stateOf(view);
    if (entry.recorded === state) return;
    entry.recorded = state;
    history.record(entry);
    if (++this.#appended > this.#options.retention) {
      history.compact();
      this.#appended = 0;
    }
  }

  #broadcast(view: EventView): void {
    if (this.#clients.size === 0) return;
    const text = frame(view);
    for (const client of this.#clients) this.#send(client, text);
  }

  /** Writes to one page, or disconnects it when it has fallen more than `PAGE_BUFFER_LIMIT` behind. */
  #send(client: ServerResponse, text: string): void {
    client.write(text);
    if (client.writableLength <= PAGE_BUFFER_LIMIT) return;
    log('live page %s disconnected: %d bytes unsent', client.socket?.remoteAddress, client.writableLength);
    // Destroying drops what it buffered at once; 'close' follows, but no more is written meanwhile.
    this.#clients.delete(client);
    client.destroy();
  }

  /**
   * Takes in states other processes recorded: an event not kept is kept as it came; one kept takes
   * in their state as {@link absorb} says (they may arrive in either order).
   */
  #merge(entries: readonly HistoryEntry[]): void {
    for (const entry of entries) {
      const theirs = entry.view;
      const kept = this.#events.get(theirs.id);
      if (kept === undefined) {
        this.#keep({ ...entry, recorded: stateOf(theirs) });
        this.#broadcast(theirs);
        continue;
      }
      const mine = kept.view;
      if (absorb(mine, theirs)) kept.recorded = stateOf(mine);
      this.#broadcast(mine);
    }
  }

  #stopWatching(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    this.#unfollow?.();
    this.#unfollow = undefined;
  }
}

/** What one recorded state of an event stands for: its status, and while retrying when next. */
function stateOf(view: EventView): string {
  return view.status === 'retrying' ? `retrying ${view.webhooks.map((webhook) => webhook.nextAttemptAt ?? '').join(' ')}` : view.status;
}

function frame(view: EventView): string {
  // JSON.stringify escapes line breaks, so the event is one `data:` line.
  return `data: ${JSON.stringify(view)}\n\n`;
}
