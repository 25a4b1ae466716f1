import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { log, WEBHOOK_DEFAULTS } from 'batched-analytics/internal';
import type { CollectorConfig } from '../config/config.js';
import { CollectorMetrics } from '../observe/metrics.js';
import { Deliverer } from '../delivery/deliverer.js';
import { EventHub } from '../debugger/events.js';
import { HistoryFile } from '../debugger/history.js';
import { HostCheck } from './hosts.js';
import { JournalStore } from '../delivery/journal.js';
import { Router } from './router.js';
import { createHandler, type ServerContext } from './server.js';
import type { Store } from '../delivery/store.js';

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
   * Applies a new config to what comes next: sources (write keys, Webhooks URLs, headers,
   * secrets), delivery options and `adminToken`. Attempts in progress finish as they started.
   * @returns the entries that changed but need a restart (they are left as they were).
   */
  reload(config: CollectorConfig): { restart: string[] };
  /**
   * Stops accepting, ends live-debugger streams, waits for requests in progress (up to 2 s), stops
   * deliveries (what is undelivered stays in the store) and closes the store. Idempotent.
   */
  close(): Promise<void>;
}

/** The collector's defaults. */
export const COLLECTOR_DEFAULTS = { host: '127.0.0.1', port: 8088 } as const;

/** Entries a running collector cannot change: its socket, store, queue and history are made once. */
const RESTART_ONLY = ['server', 'queue', 'store', 'postgres', 'historyEvents', 'allowedHosts'] as const;

/** How long `close()` lets requests in progress finish before it cuts their connections, in ms. */
const CLOSE_GRACE = 2_000;

/**
 * Starts the local collector: recovers the store, listens, then resumes pending deliveries.
 * @throws when the store cannot be opened (e.g. another process holds the data dir) or the port is taken.
 */
export async function startCollector(options: CollectorOptions): Promise<RunningCollector> {
  const { config } = options;
  const store = options.store ?? new JournalStore(options.dataDir);
  const snapshot = await store.open();
  const sources = new Map(config.sources.map((source) => [source.name, source]));
  // The history lives beside the journal, or in a store that keeps one for every process sharing
  // it; with another store (no data dir of its own) in memory only.
  const history = options.store ? options.store.history?.(config.historyEvents) : new HistoryFile(options.dataDir, config.historyEvents);
  const hub = new EventHub({ retention: config.historyEvents, history });
  await hub.load();
  const metrics: CollectorMetrics = new CollectorMetrics({
    backlog: async () => store.backlog?.(),
    inFlight: (): number => deliverer.inFlight,
    breakers: () => deliverer.breakers(),
    retryWindow: () => context.config.delivery.retryWindow ?? WEBHOOK_DEFAULTS.retryWindow,
  });
  const deliverer = new Deliverer({ sources, delivery: config.delivery, queue: config.queue, store, hub, metrics, show: (delivery) => router.showClaimed(delivery) });
  const router = new Router({ store, hub, deliverer, sources, lease: config.queue.lease, metrics });
  const hosts = new HostCheck(config.allowedHosts);
  const context: ServerContext = { config, router, hub, hosts, metrics };
  const { headersTimeout, requestTimeout, maxConnections } = config.server;
  const server = http.createServer(
    // Node checks the timeouts every connectionsCheckingInterval (30 s by default), which would let
    // a slow client hold its connection that much longer than configured.
    { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1_000, headersTimeout) },
    createHandler(context),
  );
  server.maxConnections = maxConnections;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? COLLECTOR_DEFAULTS.port, options.host ?? COLLECTOR_DEFAULTS.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await Promise.all([deliverer.close(), store.close(), hub.close()]);
    throw error;
  }
  const { address, family, port } = server.address() as AddressInfo;
  const url = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  hosts.listening(address, port);
  deliverer.start();
  log('collector: listening on %s; %d deliveries pending in the store', url, snapshot.pending);

  let closing: Promise<void> | undefined;
  const close = async () => {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    // Ends the pages' streams now, or the server would wait for them; the history is written last.
    void hub.close();
    server.closeIdleConnections();
    const grace = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE);
    await stopped;
    clearTimeout(grace);
    await deliverer.close();
    await Promise.all([store.close(), hub.close()]);
    log('collector: closed');
  };
  const reload = (next: CollectorConfig) => {
    const restart = RESTART_ONLY.filter((key) => !isDeepStrictEqual(next[key], context.config[key]));
    const kept = { ...next, ...Object.fromEntries(RESTART_ONLY.map((key) => [key, context.config[key]])) };
    const byName = new Map(kept.sources.map((source) => [source.name, source]));
    deliverer.reconfigure(byName, kept.delivery);
    router.reconfigure(byName);
    context.config = kept;
    return { restart };
  };
  return {
    url,
    resumed: snapshot.pending,
    reload,
    close: () => (closing ??= close()),
  };
}
