// What the live debugger shows of each event: the shapes its page, history and detail view share.
import type { Origin, Route } from '../delivery/events.js';

/**
 * Where a webhook stands with one message. `skipped`: another URL accepted the message before this
 * one answered (or was asked), so it was not needed (and is not retried). One that answered with a
 * failure is `failed` even then, so that a dead receiver shows as one. `filtered`: the URL's
 * `filter` does not take the message, so it is never sent there.
 */
export type WebhookStatus = 'pending' | 'delivered' | 'retrying' | 'failed' | 'skipped' | 'filtered';

/** One receiver's view of one message, as the live debugger shows it. */
export interface WebhookView {
  /** The receiver's URL without credentials or query. */
  url: string;
  status: WebhookStatus;
  /** Requests made to this receiver so far. */
  attempts: number;
  /** The latest response status; absent when no response came. */
  httpStatus?: number;
  /** The URL's `filter` as the page reads it (`types: …; events: …`); absent when it takes every message. */
  filter?: string;
  /** Why the latest request failed, or why the receiver is no longer asked. */
  note?: string;
  /** While `retrying`: when the next attempt starts (ISO 8601), for the page's countdown. */
  nextAttemptAt?: string;
  /**
   * The attempt of the delivery its latest state came from, as the store numbers them whichever
   * collector made it (`attempts` counts only the requests the showing collector saw); absent before one.
   */
  attempt?: number;
}

/** Where a message stands: delivered as soon as any receiver accepted it. */
export type MessageStatus = 'pending' | 'delivered' | 'retrying' | 'failed' | 'not forwarded';

/** A message's status from its receivers'. */
export function messageStatus(webhooks: readonly WebhookView[]): MessageStatus {
  if (webhooks.length === 0) return 'not forwarded';
  for (const status of ['delivered', 'retrying', 'pending'] as const) if (webhooks.some((webhook) => webhook.status === status)) return status;
  return 'failed';
}

/** The statuses a message ends in. */
export const SETTLED: ReadonlySet<MessageStatus> = new Set(['delivered', 'failed', 'not forwarded']);

/**
 * Takes into `mine` another state of the same event, recorded by another process or earlier: the
 * further advanced of the two wins, and how the event arrived is taken from the one that knows.
 * (The requests themselves are the store's: the detail view reads them there.)
 * @returns whether `theirs` was further, so that `mine` now has its status.
 */
export function absorb(mine: EventView, theirs: EventView): boolean {
  const further = compareProgress(theirs, mine) > 0;
  if (further) {
    mine.webhooks = theirs.webhooks;
    mine.status = theirs.status;
  }
  // A process that claimed an event it had not seen arrive shows it as a replay from the store;
  // the accepting process's state tells how it arrived.
  if (mine.origin === 'replay' && theirs.origin !== 'replay') mine.origin = theirs.origin;
  return further;
}

/**
 * Which of two states of one event is further: a settled one, then the one of a later attempt (the
 * store numbers a delivery's attempts, whichever process makes them; the requests a process
 * counted are only those it saw), then the one with more requests made, then a retrying one (an
 * attempt's answers are recorded before its retry is: a state written between the two is pending).
 */
function compareProgress(a: EventView, b: EventView): number {
  const settled = Number(SETTLED.has(a.status)) - Number(SETTLED.has(b.status));
  if (settled !== 0) return settled;
  return lastAttempt(a) - lastAttempt(b) || requests(a) - requests(b) || Number(a.status === 'retrying') - Number(b.status === 'retrying');
}

function lastAttempt(view: EventView): number {
  return view.webhooks.reduce((last, webhook) => Math.max(last, webhook.attempt ?? 0), 0);
}

function requests(view: EventView): number {
  return view.webhooks.reduce((sum, webhook) => sum + webhook.attempts, 0);
}

/** Whether a message went to a destination, and why not when it did not. */
export type RouteView = Route;

/** One incoming event (or audience identify, or deletion) and its fate. */
export interface EventView {
  id: string;
  /** ISO 8601; when the collector accepted it (or replayed it after a restart). */
  receivedAt: string;
  source: string;
  /** How it arrived (`replay`: shown from the store, accepted before a restart or by another collector whose record of it this one had not seen). */
  origin: Origin;
  /** For a redelivery: the event it sends again. */
  replayOf?: string;
  /**
   * For a repeat of a message its source accepted within the de-duplication window: when the
   * first was accepted (ISO 8601). It was answered 200 and forwarded nowhere.
   */
  duplicateOf?: { firstAcceptedAt: string };
  /**
   * A message forwarded nowhere, as accepted. A forwarded one's {@link outlineOf outline}: the
   * whole message is its delivery's, in the store, where the detail view reads it.
   */
  message: Record<string, unknown>;
  routes: RouteView[];
  /** The message's own status, kept up to date by the hub. */
  status: MessageStatus;
  webhooks: WebhookView[];
}

/** The fields of a message the page's list shows and filters on, kept as they are in an outline. */
const OUTLINE_FIELDS = ['type', 'messageId', 'userId', 'anonymousId', 'event', 'name', 'previousId', 'groupId'] as const;

/**
 * What the page's list, its stream and its history keep of a forwarded message: the fields the list
 * shows and filters on (a page's `properties.path`, an identify's trait names as `traitNames`),
 * not its properties, traits or context. The store keeps the message once, with its delivery; a
 * copy in every view, history line and page update cost the collector memory and serialisation
 * for every message it forwards.
 */
export function outlineOf(message: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const outline: Record<string, unknown> = {};
  for (const field of OUTLINE_FIELDS) if (message[field] !== undefined) outline[field] = message[field];
  const path = (message.properties as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') outline.properties = { path };
  const traits = message.traits;
  if (traits !== null && typeof traits === 'object') outline.traitNames = Object.keys(traits);
  return outline;
}
