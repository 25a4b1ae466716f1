import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { WebhookDestination } from 'batched-analytics/internal';
import { type DeliveryEmitter, type Entry, isFilteredOut } from '../delivery/events.js';
import { sourceKey } from '../delivery/source-key.js';
import { type HistogramTally, TalliedHistogram } from './tallied-histogram.js';

/** The `Content-Type` of {@link CollectorMetrics.exposition}'s text. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Every metric of ours starts with this; the process's default metrics keep their usual names. */
const PREFIX = 'batched_analytics_';

/**
 * Receiver latency buckets, in seconds: from a fast local receiver up to the default 5 s
 * `delivery.timeout` and beyond (a timed-out request lands in +Inf).
 */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the store holds undelivered, read at each scrape. */
export interface BacklogReading {
  pending: number;
  /** When the oldest pending delivery was accepted, in ms since the epoch; absent when none. */
  oldestAt?: number;
}

/** The readings taken at scrape time from the running collector, not counted as they happen. */
export interface MetricSources {
  /** The store's backlog; absent when the store cannot say. Rejects when the store is unavailable. */
  backlog(): Promise<BacklogReading | undefined>;
  /** Deliveries this process holds claims on (attempts running, or waiting for a URL's slot). */
  inFlight(): number;
  /** Each source's receivers' breakers. */
  breakers(): { source: string; url: string; open: boolean }[];
  /** The configured `delivery.retryWindow`, in ms: what the backlog's age is judged against. */
  retryWindow(): number;
}

/**
 * A receiver's answer grouped as alerts want it, as an index into a tally: 0 for `error` (none
 * came), else the status's hundreds (2 for `2xx` … 5 for `5xx`).
 */
function statusClassIndex(status: number | undefined): number {
  return status === undefined ? 0 : Math.floor(status / 100);
}

/** The `status_class` label of a {@link statusClassIndex}. */
function statusClass(index: number): string {
  return index === 0 ? 'error' : `${index}xx`;
}

/**
 * prom-client's default gauges whose names end in `_total`, which promtool's lint refuses (a
 * non-counter with a counter's suffix; `promtool check metrics` exits 3): each is served as
 * `…_all` (the total over the types its `nodejs_active_*` twin splits by), with the value
 * prom-client computes.
 */
const TOTAL_GAUGES = ['handles', 'requests', 'resources'].map((what) => ({ name: `nodejs_active_${what}`, help: `Number of active ${what}, of every type.` }));

function renameTotalGauges(registry: Registry): void {
  for (const { name, help } of TOTAL_GAUGES) {
    const original = registry.getSingleMetric(`${name}_total`);
    // Absent where prom-client does not make it (no `getActiveResourcesInfo` on the runtime).
    if (original === undefined) continue;
    registry.removeSingleMetric(`${name}_total`);
    new Gauge({
      name: `${name}_all`,
      help,
      registers: [registry],
      async collect() {
        this.set((await original.get()).values[0]?.value ?? 0);
      },
    });
  }
}

/**
 * The collector's Prometheus metrics, in a registry of its own (never prom-client's global one:
 * an application embedding the collector keeps its own metrics apart). Counters are counted as
 * things happen; the backlog, in-flight deliveries and breakers are read at each scrape.
 * Labels carry source names and receiver URLs without credentials or query strings, never a
 * write key, token, secret or message content.
 */
export class CollectorMetrics {
  readonly #registry = new Registry();
  readonly #accepted: Counter<'source'>;
  readonly #deduplicated: Counter<'source'>;
  readonly #filtered: Counter<'source'>;
  readonly #refused: Counter<'source' | 'reason'>;
  readonly #deliveries: Counter<'source' | 'outcome'>;
  readonly #retries: Counter<'source'>;
  readonly #alerts: Counter<'type'>;
  readonly #requests: Counter<'source' | 'url' | 'status_class'>;
  readonly #latency: TalliedHistogram;
  /**
   * Requests and settlements counted as they happen, added to their counters when these are read
   * (a scrape): a labelled increment hashes its labels each time, several times the cost of a
   * tally, and a busy collector makes one per request and per delivery. By source and URL (as
   * shown), then status class, with the URL's latency; by source, then outcome.
   */
  readonly #requestTallies = new Map<string, { source: string; url: string; counts: number[]; latency: HistogramTally }>();
  readonly #settledTallies = new Map<string, { delivered: number; failed: number }>();

  constructor(readings: MetricSources) {
    const registers = [this.#registry];
    collectDefaultMetrics({ register: this.#registry });
    renameTotalGauges(this.#registry);
    this.#accepted = new Counter({ name: `${PREFIX}messages_accepted_total`, help: 'Messages recorded by the ingestion API, audiences, deletions and redeliveries.', labelNames: ['source'], registers });
    this.#deduplicated = new Counter({
      name: `${PREFIX}messages_deduplicated_total`,
      help: 'Messages of the ingestion API answered 200 and forwarded nowhere: repeats of a messageId the source accepted within dedupe.window.',
      labelNames: ['source'],
      registers,
    });
    this.#filtered = new Counter({
      name: `${PREFIX}messages_filtered_total`,
      help: 'Messages accepted and forwarded nowhere because no webhook URL of their source has a filter that takes them.',
      labelNames: ['source'],
      registers,
    });
    this.#refused = new Counter({
      name: `${PREFIX}requests_refused_total`,
      help: 'Ingestion requests refused, nothing of them recorded; source is empty when the write key is not known.',
      labelNames: ['source', 'reason'],
      registers,
    });
    const settledTallies = this.#settledTallies;
    this.#deliveries = new Counter({
      name: `${PREFIX}deliveries_total`,
      help: 'Deliveries settled, by outcome (delivered, failed).',
      labelNames: ['source', 'outcome'],
      registers,
      collect() {
        for (const [source, tally] of settledTallies) {
          for (const outcome of ['delivered', 'failed'] as const) {
            if (tally[outcome] > 0) this.inc({ source, outcome }, tally[outcome]);
            tally[outcome] = 0;
          }
        }
      },
    });
    this.#retries = new Counter({ name: `${PREFIX}delivery_retries_total`, help: 'Attempts that ended with a retry scheduled.', labelNames: ['source'], registers });
    this.#alerts = new Counter({ name: `${PREFIX}alerts_total`, help: 'Alerts raised about failing receivers, by type (endpoint.failing, endpoint.disabled, ...).', labelNames: ['type'], registers });
    const requestTallies = this.#requestTallies;
    this.#requests = new Counter({
      name: `${PREFIX}webhook_requests_total`,
      help: 'Requests to receivers, by status class (error: no response).',
      labelNames: ['source', 'url', 'status_class'],
      registers,
      collect() {
        for (const { source, url, counts } of requestTallies.values()) {
          counts.forEach((count, index) => {
            if (count > 0) this.inc({ source, url, status_class: statusClass(index) }, count);
            counts[index] = 0;
          });
        }
      },
    });
    this.#latency = new TalliedHistogram({ name: `${PREFIX}webhook_request_duration_seconds`, help: 'How long requests to receivers took.', buckets: LATENCY_BUCKETS, registry: this.#registry });
    // One reading of the store serves both backlog gauges: the first one's collect() reads it, the second's reuses it.
    let backlog: Promise<BacklogReading | undefined> | undefined;
    const readBacklog = () => (backlog ??= readings.backlog().finally(() => setImmediate(() => (backlog = undefined))));
    new Gauge({
      name: `${PREFIX}backlog_deliveries`,
      help: 'Deliveries pending in the store (every process sharing it), not yet delivered or given up.',
      registers,
      async collect() {
        const reading = await readBacklog().catch(() => undefined);
        if (reading) this.set(reading.pending);
      },
    });
    new Gauge({
      name: `${PREFIX}backlog_oldest_age_seconds`,
      help: 'Age of the oldest pending delivery, from its acceptance; 0 when none is pending.',
      registers,
      async collect() {
        const reading = await readBacklog().catch(() => undefined);
        if (reading) this.set(reading.oldestAt === undefined ? 0 : Math.max(0, Date.now() - reading.oldestAt) / 1000);
      },
    });
    new Gauge({
      name: `${PREFIX}deliveries_in_flight`,
      help: 'Deliveries this process holds claims on, being attempted.',
      registers,
      collect() {
        this.set(readings.inFlight());
      },
    });
    new Gauge({
      name: `${PREFIX}webhook_breaker_open`,
      help: "1 while a receiver URL's circuit breaker is open (only probes reach it), else 0.",
      labelNames: ['source', 'url'],
      registers,
      collect() {
        this.reset();
        for (const { source, url, open } of readings.breakers()) this.set({ source, url }, open ? 1 : 0);
      },
    });
    new Gauge({
      name: `${PREFIX}delivery_retry_window_seconds`,
      help: 'The configured delivery.retryWindow: how long a delivery is retried after its acceptance.',
      registers,
      collect() {
        this.set(readings.retryWindow() / 1000);
      },
    });
  }

  /** Counts what `events` tells: messages accepted, repeated and filtered out, outcomes, retries, receivers' requests. */
  follow(events: DeliveryEmitter): void {
    events.on('accepted', (entries) => {
      countRuns(entries, (source, count) => this.accepted(source, count));
      countRuns(entries.filter(isFilteredOut), (source, count) => this.filtered(source, count));
    });
    events.on('duplicate', (repeats) => countRuns(repeats.map(({ entry }) => entry), (source, count) => this.deduplicated(source, count)));
    events.on('settled', ({ delivery, outcome }) => this.settled(delivery.source, outcome));
    events.on('dropped', ({ delivery }) => this.settled(delivery.source, 'failed'));
    events.on('retry', ({ delivery }) => this.retried(delivery.source));
    events.on('alert', ({ type }) => this.#alerts.inc({ type }));
    events.on('destination', ({ source, destination }) => this.watch(source, destination));
  }

  /** `count` messages of `source` recorded. */
  accepted(source: string, count = 1): void {
    this.#accepted.inc({ source }, count);
  }

  /** `count` repeats of `source` (also counted as accepted) forwarded nowhere. */
  deduplicated(source: string, count = 1): void {
    this.#deduplicated.inc({ source }, count);
  }

  /** `count` messages of `source` (also counted as accepted) that no webhook URL's filter takes. */
  filtered(source: string, count = 1): void {
    this.#filtered.inc({ source }, count);
  }

  /** An ingestion request refused; `reason` is the error code answered, e.g. `ERR_VALIDATION`. */
  refused(source: string | undefined, reason: string): void {
    this.#refused.inc({ source: source ?? '', reason });
  }

  /** A delivery settled. */
  settled(source: string, outcome: 'delivered' | 'failed'): void {
    let tally = this.#settledTallies.get(source);
    if (tally === undefined) {
      tally = { delivered: 0, failed: 0 };
      this.#settledTallies.set(source, tally);
    }
    tally[outcome] += 1;
  }

  /** An attempt ended with a retry scheduled. */
  retried(source: string): void {
    this.#retries.inc({ source });
  }

  /** Counts the requests `destination` makes to its receivers, and their latency. */
  watch(source: string, destination: WebhookDestination): void {
    // The event's url is the configured one, which may hold credentials or a query: label by
    // position with the URLs as shown, parsed once here rather than for every request.
    // A destination made again by a reload counts into the same tallies as the one it replaced.
    const tallies = destination.breakers().map(({ url }) => {
      const key = sourceKey(source, url);
      let tally = this.#requestTallies.get(key);
      if (tally === undefined) {
        tally = { source, url, counts: [], latency: this.#latency.tally({ source, url }) };
        this.#requestTallies.set(key, tally);
      }
      return tally;
    });
    destination.on('attempt', ({ index, status, duration }) => {
      const tally = tallies[index]!;
      const statusIndex = statusClassIndex(status);
      tally.counts[statusIndex] = (tally.counts[statusIndex] ?? 0) + 1;
      this.#latency.observe(tally.latency, duration / 1000);
    });
  }

  /** The exposition, in the Prometheus text format. */
  exposition(): Promise<string> {
    return this.#registry.metrics();
  }
}

/** Calls `count` once per run of entries of one source (a batch is one): a labelled increment costs more than a loop step. */
function countRuns(entries: readonly Entry[], count: (source: string, count: number) => void): void {
  let run = { source: '', count: 0 };
  for (const { source } of entries) {
    if (source === run.source) run.count += 1;
    else {
      if (run.count > 0) count(run.source, run.count);
      run = { source, count: 1 };
    }
  }
  if (run.count > 0) count(run.source, run.count);
}
