import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { ConfigError, log, WEBHOOK_DEFAULTS } from 'batched-analytics/internal';
import { CollectorMetrics } from '../observe/metrics.js';
import { Access, isLoopback } from '../ingress/auth.js';
import { ALERTS_SOURCE, alertSettings, type AlertsConfig, type CollectorConfig, MIN_TOKEN_LENGTH, type SourceConfig } from '../config/config.js';
import { type CollectorLogger, partLogger, Reporter } from '../config/report.js';
import { Alerts } from '../delivery/alerts.js';
import { Deliverer } from '../delivery/deliverer.js';
import { DeliveryEmitter } from '../delivery/events.js';
import { Intake } from '../delivery/intake.js';
import { EventHub } from '../debugger/events.js';
import { PageFeed } from '../debugger/feed.js';
import { HistoryFile } from '../debugger/history.js';
import { PostgresHistory } from '../debugger/postgres-history.js';
import { logDeliveries } from '../observe/delivery-log.js';
import { HostCheck } from '../ingress/hosts.js';
import { JournalStore } from '../delivery/journal/store.js';
import { openStore } from '../delivery/open-store.js';
import { Readiness } from '../ingress/health.js';
import { Router } from '../ingress/router.js';
import { createHandler, type ServerContext, startingHandler } from '../ingress/server.js';
import type { Store, StoreSnapshot } from '../delivery/store.js';

/** Options of {@link startCollector}. */
export interface CollectorOptions {
  config: CollectorConfig;
  /** Where the journal lives; ignored when `store` is given. */
  dataDir: string;
  /** @default '127.0.0.1' */
  host?: string;
  /** `0` picks a free port. @default 8088 */
  port?: number;
  /** Replaces the file journal, e.g. with a server-grade store. @default a `JournalStore` in `dataDir` */
  store?: Store;
  /** Gives up waiting for the store (the process was asked to stop before it started). */
  signal?: AbortSignal;
  /**
   * Where this collector's warnings and errors go: a pino logger (each part writes through its
   * child, e.g. `{ part: 'journal' }`) or any {@link CollectorLogger}. Not the `store`'s when it is
   * given: that one takes its own `logger` option.
   * @default one human line each on stderr
   */
  logger?: CollectorLogger;
}

/** A collector that is listening. */
export interface RunningCollector {
  /** Base URL, e.g. `http://127.0.0.1:8088`: the client's `endpoint`. */
  url: string;
  /**
   * Deliveries pending in the store at start (left by the previous run, or by the other processes
   * sharing the store), now being delivered.
   */
  resumed: number;
  /**
   * Starts stopping the way a load balancer needs: `/readyz` answers 503 from now on, while
   * everything else keeps answering for `server.drainDelay` ms (or until `signal` aborts), so that
   * the balancer stops sending first. Then call `close()`.
   */
  drain(signal?: AbortSignal): Promise<void>;
  /**
   * Applies a new config to what comes next: sources (write keys, Webhooks URLs, headers,
   * secrets), delivery options and the tokens. Attempts in progress finish as they started.
   * @returns the entries that changed but need a restart (they are left as they were).
   */
  reload(config: CollectorConfig): { restart: string[] };
  /**
   * Stops accepting (`/readyz` answers 503 from the start), ends live-debugger streams, waits for requests in progress (up to 2 s), stops
   * deliveries (what is undelivered stays in the store) and closes the store. Idempotent.
   */
  close(): Promise<void>;
}

/** The collector's defaults. */
export const COLLECTOR_DEFAULTS = { host: '127.0.0.1', port: 8088 } as const;

/** Entries a running collector cannot change: its socket, store, queue and history are made once. */
const RESTART_ONLY = ['server', 'queue', 'store', 'postgres', 'historyEvents', 'allowedHosts', 'dedupe', 'retention'] as const;

/** How long `close()` lets requests in progress finish before it cuts their connections, in ms. */
const CLOSE_GRACE = 2_000;

/**
 * Starts the local collector: listens (`/healthz` and `/readyz` answer at once, everything else 503
 * until the store is open), opens the store (waiting up to `postgres.startTimeout` for a database
 * that is not up yet), then serves and resumes pending deliveries.
 * @throws {ConfigError} naming `adminToken` when it would listen beyond loopback without a token;
 * what the store's opening threw (e.g. another process holds the data dir, or the database was
 * not reachable in time), or the listening error (e.g. the port is taken).
 */
export async function startCollector(options: CollectorOptions): Promise<RunningCollector> {
  const { config } = options;
  const report = new Reporter(options.logger);
  const ingress = report.child('ingress');
  const access = new Access(config);
  const readiness = new Readiness();
  const hosts = new HostCheck(config.allowedHosts);
  const { headersTimeout, requestTimeout, maxConnections } = config.server;
  // Until the store is open, only the health routes answer; then the collector's own routes.
  let handler = startingHandler(readiness, ingress);
  const server = http.createServer(
    // Node checks the timeouts every connectionsCheckingInterval (30 s by default), which would let
    // a slow client hold its connection that much longer than configured.
    { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1_000, headersTimeout) },
    (req, res) => handler(req, res),
  );
  server.maxConnections = maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? COLLECTOR_DEFAULTS.port, options.host ?? COLLECTOR_DEFAULTS.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, family, port } = server.address() as AddressInfo;
  const url = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  access.listening(address);
  hosts.listening(address, port);
  const store: Store = options.store ?? new JournalStore(options.dataDir, { dedupeWindow: config.dedupe.window, keepSettledFor: config.retention.keepFor, keepSettledBytes: config.retention.maxBytes, logger: options.logger && partLogger(options.logger, 'journal') });
  let snapshot: StoreSnapshot | undefined;
  let opened: Awaited<ReturnType<typeof serveFrom>>;
  try {
    if (!access.configured && !isLoopback(address)) {
      throw new ConfigError(
        'adminToken',
        `Listening on ${options.host ?? address} shows every message to whoever reaches the port: add "adminToken" (or "readToken") to the config, at least ${MIN_TOKEN_LENGTH} characters, or listen on 127.0.0.1`,
      );
    }
    snapshot = await openStore(store, {
      // Only a database can be "not up yet"; the journal's failures are final.
      startTimeout: options.store ? config.postgres.startTimeout : 0,
      signal: options.signal,
      report: report.child('store'),
      onWait: (reason) => readiness.starting(`the store is not available yet: ${reason}`),
    });
    opened = await serveFrom(store, options, report);
  } catch (error) {
    // What was opened is closed: the caller gets an error, not a process kept alive by a listener.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    // A store whose opening failed has nothing to close.
    if (snapshot !== undefined) await store.close().catch(() => undefined);
    throw error;
  }
  const { hub, feed, router, deliverer, metrics, alerts } = opened;
  const webhooks = { enable: (source: string, url: string) => deliverer.enable(source, url), urls: () => deliverer.urls(), alerts: () => alerts.latest() };
  const context: ServerContext = { config, router, records: store, hub, hosts, access, readiness, metrics, report: ingress, webhooks };
  opened.serving(context);
  handler = createHandler(context);
  readiness.serving(() => store.ping?.() ?? Promise.resolve());
  deliverer.start();
  log('collector: listening on %s; %d deliveries pending in the store', url, snapshot.pending);

  let closing: Promise<void> | undefined;
  const close = async () => {
    readiness.stopping();
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    // Ends the pages' streams now, or the server would wait for them; the history is written last.
    void hub.close();
    server.closeIdleConnections();
    const grace = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE);
    await stopped;
    clearTimeout(grace);
    await deliverer.close();
    // The page's history last writes what the deliverer's last outcomes told it, through the
    // store's connections when it shares its database: before the store closes them.
    await hub.close();
    await store.close();
    log('collector: closed');
  };
  return {
    url,
    resumed: snapshot.pending,
    drain: async (signal) => {
      readiness.stopping();
      await sleep(config.server.drainDelay, undefined, { signal, ref: false }).catch(() => undefined);
    },
    reload: (next) => {
      const restart = RESTART_ONLY.filter((key) => !isDeepStrictEqual(next[key], context.config[key]));
      const kept = { ...next, ...Object.fromEntries(RESTART_ONLY.map((key) => [key, context.config[key]])) };
      const byName = new Map(kept.sources.map((source) => [source.name, source]));
      deliverer.reconfigure(withAlerts(byName, kept.alerts), kept.delivery);
      alerts.reconfigure(kept.alerts !== undefined);
      router.reconfigure(byName);
      feed.reconfigure(byName);
      const nextAccess = new Access(kept);
      nextAccess.listening(address);
      context.access = nextAccess;
      // A stream was let in by the tokens it opened with: one of them may be revoked.
      if (kept.adminToken !== context.config.adminToken || kept.readToken !== context.config.readToken) hub.endStreams();
      context.config = kept;
      return { restart };
    },
    close: () => (closing ??= close()),
  };
}

/**
 * Wires the parts that serve from an open store, one way: the router (ingress) hands what it
 * validated to the intake, which records it and hands claims to the deliverer (not started yet);
 * the delivery layer's events feed the page, the metrics and the logs, which it does not know.
 * The metrics read the running config once `serving` has told them which it is.
 */
async function serveFrom(
  store: Store,
  options: CollectorOptions,
  report: Reporter,
): Promise<{ hub: EventHub; feed: PageFeed; router: Router; deliverer: Deliverer; metrics: CollectorMetrics; alerts: Alerts; serving: (context: ServerContext) => void }> {
  const { config } = options;
  const sources = new Map(config.sources.map((source) => [source.name, source]));
  // The history lives beside the journal, or in the database every process sharing it uses; with
  // another store (no data dir of its own) in memory only.
  const database = options.store?.database?.();
  const history = database
    ? new PostgresHistory(database, config.historyEvents, report.child('history'))
    : options.store
      ? undefined
      : new HistoryFile(options.dataDir, config.historyEvents, report.child('history'));
  const hub = new EventHub({ retention: config.historyEvents, history });
  await hub.load();
  const events = new DeliveryEmitter();
  const deliverer = new Deliverer({ sources: withAlerts(sources, config.alerts), delivery: config.delivery, queue: config.queue, store, events, report: report.child('deliverer') });
  const alerts = new Alerts({ store, deliverer, events, lease: config.queue.lease, sending: config.alerts !== undefined, report: report.child('alerts') });
  alerts.follow(events);
  const intake = new Intake({ store, deliverer, events, lease: config.queue.lease });
  let running: { config: CollectorConfig } = { config };
  const metrics = new CollectorMetrics({
    backlog: async () => store.backlog?.(),
    inFlight: () => deliverer.inFlight,
    breakers: () => deliverer.breakers(),
    retryWindow: () => running.config.delivery.retryWindow ?? WEBHOOK_DEFAULTS.retryWindow,
  });
  const feed = new PageFeed({ hub, sources });
  feed.follow(events);
  metrics.follow(events);
  logDeliveries(events, report.child('deliveries'));
  const router = new Router({ intake, records: store, sources });
  return { hub, feed, router, deliverer, metrics, alerts, serving: (context) => (running = context) };
}

/** The sources the deliverer delivers for: the config's, and the alerts' own when they go somewhere. */
function withAlerts(sources: ReadonlyMap<string, SourceConfig>, alerts: AlertsConfig | undefined): ReadonlyMap<string, SourceConfig> {
  if (alerts === undefined) return sources;
  return new Map(sources).set(ALERTS_SOURCE, { name: ALERTS_SOURCE, writeKey: '', webhooks: alertSettings(alerts) });
}
