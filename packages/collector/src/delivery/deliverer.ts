import { displayUrl, filterTakes, InProgress, log, messageOf, type PreparedWebhook, Queue, WEBHOOK_DEFAULTS, WebhookDestination, type WebhookSettings } from 'batched-analytics/internal';
import type { DeliveryOptions, QueueOptions, SourceConfig } from '../config/config.js';
import { DueQueue } from './due-queue.js';
import type { DeliveryEmitter } from './events.js';
import type { Reporter } from '../config/report.js';
import type { AttemptRecord, Claimed, Store } from './store.js';
import { UrlHealth } from './url-health.js';
import type { UrlState } from './url-states.js';

/** A source's destination, with what it was made from and the attempts it is making. */
interface Destination {
  destination: WebhookDestination;
  /** What it was made with: its URLs, by position. */
  settings: WebhookSettings;
  /** Its settings and the delivery options, as JSON: a reload that leaves them alone keeps it (and its breakers). */
  made: string;
  running: InProgress;
}

/** Deliveries one claim statement asks for at most: short statements, and room left for the others. */
const CLAIM_BATCH = 500;

/**
 * Attempts started at once per source, for each of its URLs whose breaker is closed (one URL's
 * worth when none is), in multiples of `maxRequestsPerUrl`: the rest of the claims held wait as
 * plain data. A URL whose breaker is open takes no request but a probe: counting its slots only
 * started attempts to wait for the other URLs' (with a silent URL beside a healthy one, 512
 * attempts where 256 keep the healthy one busy). An attempt started waits for a slot as a chain
 * of suspended calls and promises, about 4 kB each: the 10,000 claims (`maxInFlight`) of a source
 * whose receiver is down held about 40 MB of them. Four times what the URLs take in progress keeps
 * every slot busy while the attempts before are still writing their outcomes to the store (an
 * attempt ends only once its outcome is written).
 */
const STARTED_PER_SLOT = 4;

const FILTERED_SINCE = 'no webhook URL\'s filter takes it since the config was reloaded';

/**
 * How long a delivery kept for disabled URLs waits before it is looked at again, in ms. Enabling a
 * URL makes what waits for it due at once (`Store.hasten`), so this only bounds how long one that
 * enabling missed would wait; and it costs a claim and a retry per kept delivery this often.
 */
export const KEPT_RECHECK = 60 * 60 * 1000;

/** What `Deliverer.enable` answers. */
export type Enabled =
  | { outcome: 'unknown' }
  | { outcome: 'enabled' | 'not disabled'; url: string; state?: UrlState };

/**
 * Delivers what the store hands out: each delivery is claimed (at acceptance, or by `claim()` when
 * it is due: new and unclaimed, a retry whose time came, a lapsed claim of a process that died),
 * attempted once through its source's Webhooks destination, then settled, or given back to the
 * store with the time of its next attempt. Nothing waits in memory for a retry: the store keeps the
 * schedule, so any process sharing it may make the next attempt.
 *
 * At most `maxInFlight` claims are held at once, and due work is claimed once a quarter of that is
 * free (not a slot at a time); their leases are renewed every third of `lease` while the attempts
 * run. The store is asked for due work when it may have some: at start, when a claim came back
 * full or an acceptance left deliveries unclaimed, when another process says so, when a retry this
 * process scheduled comes due, and every `pollInterval` in any case.
 *
 * Each source has one `WebhookDestination`, made on its first delivery: the destination bounds
 * the requests in progress per URL and backs off a failing URL on its own, so neither a slow URL
 * nor a busy source holds back the others. When a URL that backed off answers again, the retries
 * waiting for it are made due at once (`Store.hasten`): after an outage the backlog drains at the
 * rate the URL takes, not as each delivery's backoff (up to `maxRetryDelay`) runs out. Only those
 * its backoff held back (refused, or its failed probe): a retry whose own request the receiver
 * turned down keeps its backoff, so a receiver shedding load is not sent it again at once.
 */
export class Deliverer {
  #sources: ReadonlyMap<string, SourceConfig>;
  #options: DeliveryOptions;
  readonly #queue: QueueOptions;
  readonly #store: Store;
  readonly #events: DeliveryEmitter;
  readonly #report: Reporter;
  readonly #health: UrlHealth;
  readonly #destinations = new Map<string, Destination>();
  /** Destinations a reload replaced, closed once their attempts end. */
  readonly #retired = new Set<WebhookDestination>();
  /** Claims held, by delivery id: attempts started, and those waiting to start. */
  readonly #held = new Map<string, Claimed>();
  /** Per source: attempts started and not ended, and the claims waiting to start, oldest first. */
  readonly #starts = new Map<string, Starts>();
  /** What each receiver answered in the attempt under way, by delivery id: the store records it with the outcome. */
  readonly #answers = new Map<string, AttemptRecord[]>();
  /** Attempts in progress, which close() waits for. */
  readonly #running = new InProgress();
  /**
   * Room below which no claim is made: a quarter of `maxInFlight` (or a full claim). Claiming a
   * slot as each frees made a statement of a few rows per settlement group; the work still held
   * meanwhile keeps the requests going, with far fewer claim statements.
   */
  readonly #claimFrom: number;
  /** Whether the store may have due work beyond what was claimed. */
  #backlog = true;
  #claiming: Promise<void> | undefined;
  /** Whether work was signalled (another process, an acceptance, a retry due) since the claim under way started. */
  #signalled = false;
  /** Times retries scheduled here come due (those sooner than the next poll). */
  readonly #wakes = new DueQueue<undefined>();
  #wake: { at: number; timer: NodeJS.Timeout } | undefined;
  #timers: NodeJS.Timeout[] = [];
  #stopListening: (() => void) | undefined;
  #closed = false;

  constructor(options: {
    sources: ReadonlyMap<string, SourceConfig>;
    delivery: DeliveryOptions;
    queue: QueueOptions;
    store: Store;
    /** Where claims, attempts and outcomes are told, for the page, the metrics and the logs. */
    events: DeliveryEmitter;
    /** Where the store's failures to claim, renew and settle are reported. */
    report: Reporter;
  }) {
    this.#sources = options.sources;
    this.#options = options.delivery;
    this.#queue = options.queue;
    this.#store = options.store;
    this.#events = options.events;
    this.#report = options.report;
    this.#health = new UrlHealth({ store: options.store, events: options.events, report: options.report.child('urls'), failing: options.delivery });
    this.#claimFrom = Math.min(CLAIM_BATCH, Math.ceil(this.#queue.maxInFlight / 4));
  }

  /** Starts claiming due work: at once, on every wake-up from the store, and every `pollInterval`. */
  start(): void {
    if (this.#closed) return;
    this.#stopListening = this.#store.onWork(() => this.#backlogged());
    const { pollInterval, lease } = this.#queue;
    this.#timers = [
      setInterval(() => void this.#refresh().finally(() => this.#backlogged()), pollInterval).unref(),
      setInterval(() => void this.#renew(), Math.max(1, Math.floor(lease / 3))).unref(),
    ];
    // Nothing is attempted before the disabled URLs are known.
    void this.#refresh().finally(() => this.#backlogged());
  }

  /**
   * Enables a disabled URL of `source` (named as the config has it, or as the page shows it: without
   * credentials or query) and makes what was kept for it due now.
   */
  async enable(source: string, url: string): Promise<Enabled> {
    const webhooks = this.#sources.get(source)?.webhooks?.webhooks ?? [];
    const index = indexOfUrl(webhooks, url);
    if (index === undefined) return { outcome: 'unknown' };
    const configured = webhooks[index]!.url;
    const state = await this.#health.enable(source, configured);
    if (state === undefined) return { outcome: 'not disabled', url: displayUrl(configured) };
    this.#hasten(source, index);
    return { outcome: 'enabled', url: displayUrl(configured), state };
  }

  /** Reads the URLs' states again; what another process enabled is made due here too (it may have been kept here meanwhile). */
  async #refresh(): Promise<void> {
    if (this.#closed) return;
    try {
      for (const { source, url } of await this.#health.refresh()) {
        const index = indexOfUrl(this.#sources.get(source)?.webhooks?.webhooks ?? [], url);
        if (index !== undefined) this.#hasten(source, index);
      }
    } catch (error) {
      // The next poll reads them again; meanwhile the URLs are as last read.
      log('collector: could not read the webhook URLs\' states: %O', error);
    }
  }

  /** How many more deliveries this process takes now: the acceptance claims that many. */
  room(): number {
    return this.#closed ? 0 : Math.max(0, this.#queue.maxInFlight - this.#held.size);
  }

  /** The URLs that fail or are disabled now, as this process last read them. */
  urls(): UrlState[] {
    return this.#health.states();
  }

  /** Deliveries this process holds claims on: attempts running, or waiting for a URL's slot. */
  get inFlight(): number {
    return this.#held.size;
  }

  /** The breakers of each source's receivers, as its destination has them now. */
  breakers(): { source: string; url: string; open: boolean }[] {
    return [...this.#destinations].flatMap(([source, { destination }]) => destination.breakers().map((breaker) => ({ source, ...breaker })));
  }

  /**
   * Takes new sources and delivery options (a config reload): the next attempts use them. A
   * source whose settings or options changed gets a new destination; its old one finishes the
   * attempts it is making (their outcomes recorded as usual, nothing lost or repeated), then closes.
   */
  reconfigure(sources: ReadonlyMap<string, SourceConfig>, delivery: DeliveryOptions): void {
    this.#sources = sources;
    this.#options = delivery;
    this.#health.reconfigure(delivery);
    for (const [name, current] of this.#destinations) {
      const settings = sources.get(name)?.webhooks;
      if (settings !== undefined && current.made === this.#made(settings)) continue;
      this.#destinations.delete(name);
      this.#retired.add(current.destination);
      void current.running.settled().then(async () => {
        // close() may have closed it meanwhile.
        if (this.#retired.delete(current.destination)) await current.destination.close();
      });
    }
  }

  /**
   * Attempts deliveries claimed at acceptance. `unclaimed` of that acceptance were left in the
   * store for lack of room: they are claimed as room frees.
   */
  take(claimed: readonly Claimed[], unclaimed = 0): void {
    for (const held of claimed) this.#attempt(held);
    if (unclaimed > 0) this.#signal();
  }

  /**
   * Stops at once: aborts requests, and gives the claims held back to the store (due at once, for
   * another process or the next start). Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    clearTimeout(this.#wake?.timer);
    this.#stopListening?.();
    const destinations = [...[...this.#destinations.values()].map(({ destination }) => destination), ...this.#retired];
    this.#retired.clear();
    await Promise.all(destinations.map((destination) => destination.close()));
    await Promise.all([this.#running.settled(), this.#claiming]);
    await this.#store
      .release([...this.#held.values()])
      .catch((error: unknown) => this.#report.warn('collector: could not give claims back (they lapse after the lease): %s', messageOf(error)));
    this.#held.clear();
    this.#starts.clear();
  }

  /** The store may have due work: claim it, one claim statement at a time. */
  #backlogged(): void {
    this.#signal();
    this.#claim();
  }

  /** Due work may be in the store: the next claim looks, and a claim under way claims again. */
  #signal(): void {
    this.#backlog = true;
    this.#signalled = true;
  }

  /**
   * Claims while the store may have due work and there is room. A claim that comes back full may
   * have left more; one that comes back short found all there was, unless work was signalled while
   * it ran (its statement may not have seen that work): then it claims again at once.
   */
  #claim(): void {
    if (this.#closed || this.#claiming) return;
    this.#claiming = (async () => {
      do {
        const limit = Math.min(this.room(), CLAIM_BATCH);
        if (limit < this.#claimFrom) break;
        this.#signalled = false;
        try {
          const claimed = await this.#store.claim(limit, this.#queue.lease);
          this.#backlog = claimed.length === limit || this.#signalled;
          if (this.#closed) await this.#store.release(claimed);
          else for (const held of claimed) this.#attempt(held);
        } catch (error) {
          // The next poll tries again; meanwhile what is due waits in the store.
          this.#report.warn('collector: could not claim deliveries: %s', messageOf(error));
          break;
        }
      } while (this.#backlog && !this.#closed);
    })().finally(() => {
      this.#claiming = undefined;
    });
  }

  /** Attempts a claim now, or once an attempt of its source ends when as many are started as its URLs keep busy. */
  #attempt(held: Claimed): void {
    this.#held.set(held.delivery.id, held);
    const { source } = held.delivery;
    let starts = this.#starts.get(source);
    if (starts === undefined) this.#starts.set(source, (starts = { started: 0, waiting: new Queue() }));
    if (starts.started < this.#startsFor(source)) this.#start(held, starts);
    else starts.waiting.push(held);
  }

  #start(held: Claimed, starts: Starts): void {
    starts.started += 1;
    void this.#running.track(
      this.#deliver(held).finally(() => {
        this.#held.delete(held.delivery.id);
        starts.started -= 1;
        // Once closed, what waits stays held: close() gives it back to the store. As many as the
        // source takes now: more than one when a breaker closed since. Its breakers are read only
        // when something waits.
        if (!this.#closed && starts.waiting.length > 0) {
          const most = this.#startsFor(held.delivery.source);
          while (starts.started < most && starts.waiting.length > 0) this.#start(starts.waiting.shift()!, starts);
        }
        if (this.#backlog) this.#claim();
      }),
    );
  }

  /** How many attempts of `source` may be under way at once (see {@link STARTED_PER_SLOT}). */
  #startsFor(source: string): number {
    const destination = this.#destinations.get(source)?.destination;
    const urls = destination === undefined ? (this.#sources.get(source)?.webhooks?.webhooks.length ?? 1) : Math.max(1, closedBreakers(destination));
    return STARTED_PER_SLOT * (this.#options.maxRequestsPerUrl ?? WEBHOOK_DEFAULTS.maxRequestsPerUrl) * urls;
  }

  /** One attempt, then its outcome in the store. Never throws: a store failure lets the claim lapse. */
  async #deliver(held: Claimed): Promise<void> {
    const { delivery } = held;
    const { source } = delivery;
    const current = this.#destinationOf(source);
    this.#events.emit('claimed', { delivery, attempt: held.attempt, acceptedHere: held.acceptedHere });
    try {
      if (current === undefined) {
        if (await this.#store.settle(held, 'failed')) this.#events.emit('dropped', { delivery, reason: `source ${source} has no Webhooks destination any more` });
        return;
      }
      const { destination, running } = current;
      const targets = this.#targetsOf(held, source);
      const answers: AttemptRecord[] = [];
      this.#answers.set(delivery.id, answers);
      try {
        // The fast path: a source with no disabled URL is attempted as it comes.
        if (this.#health.affects(source)) return await this.#deliverAround(held, current, targets, answers);
        const result = await running.track(destination.attemptOnce(delivery.webhook, { id: delivery.id, attempt: held.attempt, targets }));
        await this.#record(held, result, [], answers);
      } finally {
        this.#answers.delete(delivery.id);
      }
    } catch (error) {
      // The claim lapses and the delivery is attempted again: at-least-once.
      this.#report.warn('collector: could not record the outcome of %s (attempted again once its claim lapses): %s', delivery.id, messageOf(error));
    }
  }

  /**
   * An attempt at a source some of whose URLs are (or were) disabled: only the enabled ones are
   * asked; while every URL it could go to is disabled, the delivery is kept (given back to the store
   * for {@link KEPT_RECHECK}, its retry window not running), and a retry keeps the disabled URLs among
   * its targets, so that enabling one sends it there. A URL enabled again gives what waited for it
   * a new retry window from then.
   */
  async #deliverAround(held: Claimed, { destination, running, settings }: Destination, targets: number[] | undefined, answers: readonly AttemptRecord[]): Promise<void> {
    const { delivery } = held;
    const { webhooks } = settings;
    const all = targets ?? takersOf(settings, delivery.webhook);
    const disabled = all.filter((index) => this.#health.isDisabled(delivery.source, webhooks[index]!.url));
    const live = all.filter((index) => !disabled.includes(index));
    if (live.length === 0 && disabled.length > 0) return this.#keep(held, disabled, answers);
    const enabledAt = Math.max(...all.map((index) => this.#health.enabledAt(delivery.source, webhooks[index]!.url) ?? 0));
    const webhook: PreparedWebhook = enabledAt > delivery.webhook.receivedAt ? { ...delivery.webhook, receivedAt: enabledAt } : delivery.webhook;
    const result = await running.track(destination.attemptOnce(webhook, { id: delivery.id, attempt: held.attempt, targets: live }));
    // Given up by the URLs that are enabled: kept for the disabled ones.
    if (result.outcome === 'failed' && disabled.length > 0) return this.#keep(held, disabled, answers);
    await this.#record(held, result, disabled, answers);
  }

  async #keep(held: Claimed, disabled: readonly number[], answers: readonly AttemptRecord[]): Promise<void> {
    if (await this.#store.retry(held, KEPT_RECHECK, disabled, answers, disabled)) this.#events.emit('kept', { delivery: held.delivery, attempt: held.attempt, targets: disabled });
    else log('collector: %s: claim lost to another process; its outcome is theirs to record', held.delivery.id);
  }

  /** Records an attempt's outcome, with what each receiver answered; a retry also waits for the `disabled` URLs. */
  async #record(held: Claimed, result: Awaited<ReturnType<WebhookDestination['attemptOnce']>>, disabled: readonly number[], answers: readonly AttemptRecord[]): Promise<void> {
    const { delivery } = held;
    let kept = true;
    if (result.outcome === 'filtered') {
      // A reload between its acceptance and this first attempt changed the filters: no URL takes it now.
      kept = await this.#store.settle(held, 'failed');
      if (kept) this.#events.emit('settled', { delivery, attempt: held.attempt, outcome: 'failed', error: new Error(FILTERED_SINCE) });
    } else if (result.outcome === 'delivered' || result.outcome === 'failed') {
      kept = await this.#store.settle(held, result.outcome, answers);
      if (kept) this.#events.emit('settled', { delivery, attempt: held.attempt, outcome: result.outcome, error: result.outcome === 'failed' ? result.error : undefined });
    } else if (result.outcome === 'retry') {
      kept = await this.#store.retry(held, result.retryIn, [...result.targets, ...disabled], answers, [...result.waitingFor, ...disabled]);
      if (kept) {
        const failures = result.error.failures.map(({ index, error }) => ({ index, retryable: error.retryable, message: error.message }));
        this.#events.emit('retry', { delivery, attempt: held.attempt, delay: result.retryIn, failures });
        this.#wakeIn(result.retryIn);
      }
    }
    // Its lease lapsed (this process was frozen or cut off) and another process took it over.
    if (!kept) log('collector: %s: claim lost to another process; its outcome is theirs to record', delivery.id);
  }


  /**
   * The webhooks a retry goes to. A reload may have shortened the source's list since the retry
   * was scheduled: positions no longer there are dropped, and with none left, all are asked.
   */
  #targetsOf(held: Claimed, source: string): number[] | undefined {
    const count = this.#sources.get(source)?.webhooks?.webhooks.length ?? 0;
    const targets = held.targets?.filter((index) => index < count);
    return targets === undefined || targets.length === 0 ? undefined : targets;
  }

  /** Claims again when a retry scheduled here comes due; the poll finds those further off. */
  #wakeIn(delay: number): void {
    if (this.#closed || delay > this.#queue.pollInterval) return;
    const at = Date.now() + delay;
    this.#wakes.add(undefined, at, at);
    if (this.#wake === undefined || at < this.#wake.at) this.#armWake(at);
  }

  #armWake(at: number): void {
    clearTimeout(this.#wake?.timer);
    const timer = setTimeout(() => {
      this.#wake = undefined;
      const now = Date.now();
      while (this.#wakes.takeDue(now) !== undefined);
      const next = this.#wakes.nextDue;
      if (next !== undefined) this.#armWake(next);
      this.#backlogged();
    }, Math.max(0, at - Date.now())).unref();
    this.#wake = { at, timer };
  }

  /**
   * Makes the retries of `source` waiting for its webhook `index` due now, and claims them. An
   * attempt the URL's breaker refused just before it answered may record its retry after that:
   * once the attempts under way now have ended, it hastens again.
   */
  #hasten(source: string, index: number): void {
    const underway = this.#running.settled();
    const hasten = async () => {
      if (this.#closed) return;
      try {
        const hastened = await this.#store.hasten(source, index);
        log('collector: %s: webhook %d answers again; %d retries waiting for it are due now', source, index, hastened);
        if (hastened > 0) this.#backlogged();
      } catch (error) {
        // Those retries come at their own time, as they would have without this.
        log('collector: could not hasten the retries of %s: %O', source, error);
      }
    };
    void hasten()
      .then(() => underway)
      .then(hasten);
  }

  /** Extends the leases of the claims held; an attempt whose claim was lost goes on, and its outcome is refused. */
  async #renew(): Promise<void> {
    if (this.#held.size === 0 || this.#closed) return;
    try {
      const lost = await this.#store.renew([...this.#held.values()], this.#queue.lease);
      // Not renewed: taken over after it lapsed, or settled by this process while the renewal ran
      // (its outcome written, not yet acknowledged). Only a refused settlement tells the two apart.
      for (const held of lost) if (this.#held.has(held.delivery.id)) log('collector: %s: claim not renewed (it lapsed, or its outcome was being recorded)', held.delivery.id);
    } catch (error) {
      this.#report.warn('collector: could not renew claims: %s', messageOf(error));
    }
  }

  #destinationOf(name: string): Destination | undefined {
    let current = this.#destinations.get(name);
    const settings = this.#sources.get(name)?.webhooks;
    if (current === undefined && settings !== undefined) {
      const destination = new WebhookDestination(settings, this.#options);
      const shown = settings.webhooks.map(({ url }) => displayUrl(url));
      destination.on('attempt', (event) => {
        const { id, attempt, index, url, ok, status, error, duration } = event;
        this.#health.attempted(name, settings.webhooks[index]!.url, event);
        const answer: AttemptRecord = { at: Date.now() - duration, attempt, url: shown[index] ?? displayUrl(url), durationMs: duration };
        if (status !== undefined) answer.status = status;
        if (error !== undefined) answer.error = error.message;
        this.#answers.get(id)?.push(answer);
        this.#events.emit('attempt', { id, source: name, attempt, index, url, ok, status, error, duration });
      });
      destination.on('recovered', ({ index }) => this.#hasten(name, index));
      this.#events.emit('destination', { source: name, destination });
      current = { destination, settings, made: this.#made(settings), running: new InProgress() };
      this.#destinations.set(name, current);
    }
    return current;
  }

  #made(settings: WebhookSettings): string {
    return JSON.stringify([settings, this.#options]);
  }
}

/** A source's attempts under way, and the claims waiting to start, oldest first. */
interface Starts {
  started: number;
  waiting: Queue<Claimed>;
}

/** The position of `url` among `webhooks`: as configured, or else as shown (without credentials or query) when only one is so. */
function indexOfUrl(webhooks: WebhookSettings['webhooks'], url: string): number | undefined {
  const exact = webhooks.findIndex((webhook) => webhook.url === url);
  if (exact >= 0) return exact;
  const shown = webhooks.flatMap((webhook, index) => (displayUrl(webhook.url) === url ? [index] : []));
  return shown.length === 1 ? shown[0] : undefined;
}

/** The URLs a delivery's first attempt goes to: those whose filter takes it. */
function takersOf(settings: WebhookSettings, { type, event }: PreparedWebhook): number[] {
  return settings.webhooks.flatMap(({ filter }, index) => (filterTakes(filter, type, event) ? [index] : []));
}

/** How many of a destination's URLs have their breaker closed. */
function closedBreakers(destination: WebhookDestination): number {
  let closed = 0;
  for (const { open } of destination.breakers()) if (!open) closed += 1;
  return closed;
}
