import path from 'node:path';
import { COLLECTOR_DEFAULTS, type RunningCollector, startCollector } from '../app/collector.js';
import { CONFIG_DEFAULTS, type CollectorConfig, DEDUPE_DEFAULTS, loadConfig, RETENTION_DEFAULTS, MIN_TOKEN_LENGTH, QUEUE_DEFAULTS, SERVER_DEFAULTS } from '../config/config.js';
import { postgresUrl, redact } from '../config/connection-string.js';
import { PostgresStore } from '../delivery/postgres/store.js';
import { AnalyticsError, type Command, type CommandContext, ConfigError, EXIT, integerFlag, parseFlags, UsageError } from 'batched-analytics/internal';
import { POSTGRES_OPTIONS } from '../config/postgres-timeouts.js';
import { keepHeapNear } from './heap-target.js';
import { Reloader } from './reload.js';
import { liveEventsLines } from './live-url.js';
import { createLogger, LOG_FORMATS, type LogFormat, type Logger } from '../observe/log.js';

/** Where the journal goes without `--data-dir`: beside the work, visible, easy to delete. */
export const DEFAULT_DATA_DIR = '.batched-analytics';

const HELP = `Usage: batched-analytics serve --config FILE [--port N] [--host H] [--data-dir DIR | --store URL] [--log-format F]
   or: batched-analytics-collector --config FILE [the same options]

Runs the local collector: the ingestion API the client, analytics.js and the mobile libraries
send to (/v1/batch, /v1/<call>, /v1/b, /v1/import, /v1/t ...; see docs/sources.md),
POST /v1/audiences, POST /v1/deletions, a live event debugger at / and Prometheus metrics at
/metrics. Prints its base URL (http://HOST:PORT) on stdout once listening; Ctrl-C or SIGTERM
stops it. SIGHUP reads the config file again: sources, webhooks, secrets, delivery and
adminToken take effect for the next attempts; an invalid file is refused and the running
config stays; server, queue, dedupe, retention, store, postgres, historyEvents and allowedHosts
need a restart.

Options:
  --config FILE    JSON config: sources, their write keys and Webhooks destinations (required)
  --port N         port to listen on; 0 picks a free one (default ${COLLECTOR_DEFAULTS.port})
  --host H         address to listen on (default ${COLLECTOR_DEFAULTS.host}); any other than loopback
                   needs "adminToken" or "readToken" in the config: the live page, its
                   stream and details then answer only to a token or a signed-in browser
  --data-dir DIR   where messages waiting for delivery are journaled, so they survive a crash
                   (default ./${DEFAULT_DATA_DIR} in the current directory)
  --store URL      keep them in PostgreSQL instead: postgres://USER[:PASSWORD]@HOST:PORT/DB
                   (schema created at start; any number of collectors may share one database,
                   each delivering what any of them accepted, and each one's live page showing
                   the events of all); wins over the config's "store"
  --log-format F   ${LOG_FORMATS.join(' or ')}: one JSON object a line on stderr (level, time,
                   msg, fields) instead of text lines (default ${LOG_FORMATS[0]})
  -h, --help       this help

Config file:
  { "adminToken": "at least ${MIN_TOKEN_LENGTH} characters: reads the live page, sends again, deletes",
    "readToken": "at least ${MIN_TOKEN_LENGTH} characters: reads the live page and its stream only",
    "sources": [ { "name": "web", "writeKey": "wk_web", "allowedOrigins": [ "https://shop.example.com (optional)" ],
      "destinations": { "Webhooks": { "webhooks": [ { "url": "http://127.0.0.1:9000/in",
        "headers": { "X-Env": "dev" }, "rateLimit": 50 } ], "sharedSecret": "optional",
        "standardWebhooks": { "secrets": [ "whsec_… (optional)" ] } } } } ],
    "delivery": { "timeout": 5000, "retryWindow": 14400000, "minRetryDelay": 1000,
                  "maxRetryDelay": 300000, "maxRequestsPerUrl": 64, "breakerThreshold": 5 },
    "server": { "headersTimeout": ${SERVER_DEFAULTS.headersTimeout}, "requestTimeout": ${SERVER_DEFAULTS.requestTimeout}, "maxConnections": ${SERVER_DEFAULTS.maxConnections},
                "drainDelay": ${SERVER_DEFAULTS.drainDelay}, "sessionLifetime": ${SERVER_DEFAULTS.sessionLifetime}, "heapTarget": ${SERVER_DEFAULTS.heapTarget},
                "publicUrl": "https://collect.example.com (optional)", "trustProxy": [ "10.0.0.0/8 (none by default)" ] },
    "queue": { "lease": ${QUEUE_DEFAULTS.lease}, "pollInterval": ${QUEUE_DEFAULTS.pollInterval}, "maxInFlight": ${QUEUE_DEFAULTS.maxInFlight} },
    "dedupe": { "window": ${DEDUPE_DEFAULTS.window} },
    "retention": { "keepFor": ${RETENTION_DEFAULTS.keepFor}, "maxBytes": ${RETENTION_DEFAULTS.maxBytes} },
    "allowedHosts": [ "collector.internal", ".example.com" ],
    "historyEvents": ${CONFIG_DEFAULTS.historyEvents},
    "store": "postgres://collector@db.internal:5432/analytics",
    "postgres": { "connectTimeout": ${POSTGRES_OPTIONS.connectTimeout}, "startTimeout": ${POSTGRES_OPTIONS.startTimeout}, "statementTimeout": ${POSTGRES_OPTIONS.statementTimeout},
                  "queryTimeout": ${POSTGRES_OPTIONS.queryTimeout}, "idleInTransactionTimeout": ${POSTGRES_OPTIONS.idleInTransactionTimeout} } }
  Only "sources" is required; durations are in ms, and the delivery, server, queue, dedupe,
  retention, postgres and historyEvents values shown are the defaults (the server's timeouts are at most 30000).
  "queue": how long a collector's claim on a delivery lasts unless renewed (what a dead
  collector's deliveries wait before another takes them over), how often it looks for due
  work, and how many deliveries it holds at once. "dedupe.window": how long a source remembers a
  messageId (0 to 2592000000; 0: off): a repeat within it is answered 200 and forwarded nowhere.
  "retention": how long settled deliveries are kept with their attempts, to look them up
  (GET /v1/messages/<messageId>) and send them again; maxBytes bounds the journal's.
  "historyEvents": how many events the live
  page can page back through. "server.drainDelay": on SIGTERM or SIGINT, how long ingestion
  keeps answering after /readyz turned 503; "sessionLifetime": how long a browser stays signed
  in; "heapTarget": the heap size (MB) kept near between full garbage collections, soft, a
  sixth of it at most for the young generation (0: V8's own policy). "postgres" (with "store" or --store): how long connecting may take, how long a start
  waits for a database that is not up yet (0 to 3600000), how long the server
  lets a statement run, how long the collector waits for any answer (at least the statement
  timeout: a frozen server cannot cancel its own), and how long a transaction may wait on the
  collector; the others from 100 to 60000. A database that fails or does not answer in time gets
  requests refused with 503 and Retry-After, until it is back. The live page answers only
  under the collector's own address (with loopback: localhost, 127.0.0.1, [::1], with the port)
  and "allowedHosts". GET /healthz (the process serves) and GET /readyz (the store answers, not
  stopping) need no token.
`;

/** `batched-analytics serve`: the local collector. */
export const serveCommand: Command = collectorCommand('batched-analytics serve');

/** The collector's command, which names itself `program` in the lines it writes. */
export function collectorCommand(program: string): Command {
  return {
    summary: 'run the local collector: ingestion API, Webhooks delivery and a live event page',
    async run(args: string[], context: CommandContext): Promise<number> {
      const { values, positionals } = parseFlags({
        args,
        options: {
          config: { type: 'string' },
          port: { type: 'string' },
          host: { type: 'string' },
          'data-dir': { type: 'string' },
          store: { type: 'string' },
          'log-format': { type: 'string' },
          help: { type: 'boolean', short: 'h' },
        },
        allowPositionals: true,
      });
      if (values.help) {
        context.stdout.write(HELP);
        return EXIT.ok;
      }
      if (positionals.length > 0) throw new UsageError(`Unexpected argument ${JSON.stringify(positionals[0])}`);
      if (values.config === undefined) throw new UsageError('Expected --config FILE');
      const port = integerFlag('--port', values.port, 0);
      if (port !== undefined && port > 65_535) throw new UsageError(`Expected --port to be at most 65535, got ${JSON.stringify(values.port)}`);
      if (values.host === '') throw new UsageError('Expected --host to be a host name or address, got ""');
      if (values.store !== undefined && values['data-dir'] !== undefined) throw new UsageError('Expected --data-dir or --store, not both');
      const format = (values['log-format'] ?? LOG_FORMATS[0]) as LogFormat;
      if (!LOG_FORMATS.includes(format)) throw new UsageError(`Expected --log-format to be ${LOG_FORMATS.join(' or ')}, got ${JSON.stringify(values['log-format'])}`);
      const flagStore = values.store === undefined ? undefined : postgresUrl('--store', values.store);
      const config = await loadConfig(values.config);
      const logger = createLogger(format, (line) => context.stderr.write(line));
      const stopKeepingHeap = config.server.heapTarget > 0 ? keepHeapNear(config.server.heapTarget) : undefined;
      try {
        return await serve(context, logger, { program, config, file: values.config, dataDir: values['data-dir'], port, host: values.host, storeUrl: flagStore ?? config.store });
      } finally {
        stopKeepingHeap?.();
      }
    },
  };
}

/** What `serve` runs with once its flags are read. */
interface ServeOptions {
  /** How the command was run, e.g. `batched-analytics serve`. */
  program: string;
  config: CollectorConfig;
  /** The config file, read again on SIGHUP. */
  file: string;
  /** `--data-dir` as given. */
  dataDir: string | undefined;
  port: number | undefined;
  host: string | undefined;
  storeUrl: string | undefined;
}

async function serve(context: CommandContext, logger: Logger, options: ServeOptions): Promise<number> {
  const { program, config, port, host, storeUrl } = options;
  const dataDir = path.resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  const kept = storeUrl === undefined ? 'journal' : 'database';
  let collector: RunningCollector;
  try {
    const store = storeUrl === undefined ? undefined : new PostgresStore(storeUrl, { ...config.postgres, dedupeWindow: config.dedupe.window, keepSettledFor: config.retention.keepFor, logger: logger.child({ part: 'postgres' }) });
    // The collector's warnings and errors go out in the chosen format.
    collector = await startCollector({ config, dataDir, port, host, store, signal: context.signal, logger });
  } catch (error) {
    // A token missing for the address is a config fault: exit 2, as any other.
    if (error instanceof ConfigError) throw error;
    const why = `${program}: cannot start: ${describeStartError(error, host, port)}`;
    if (logger.format === 'json') logger.error({}, why);
    else context.stderr.write(`${why}\n`);
    return EXIT.incomplete;
  }
  // Listening before the URL is printed: a script that reads it may send SIGHUP at once, and
  // without a listener SIGHUP ends the process.
  const reloading = new Reloader(options.file, collector, logger.child({ part: 'reload' }));
  process.on('SIGHUP', reloading.listener);
  if (logger.format === 'json') {
    logger.info('collector listening', {
      url: collector.url,
      store: storeUrl === undefined ? dataDir : redact(storeUrl),
      sources: config.sources.map(({ name }) => name),
      pending: collector.resumed,
    });
  } else {
    const defaulted = options.dataDir === undefined ? ' (default; choose with --data-dir)' : '';
    context.stderr.write(
      [
        `collector listening on ${collector.url}`,
        ...liveEventsLines(collector.url),
        storeUrl === undefined ? `  data dir:     ${dataDir}${defaulted}` : `  store:        ${redact(storeUrl)} (PostgreSQL, shared with any other collector on it)`,
        ...config.sources.map(({ name, webhooks }) => `  source ${name}: ${webhooks ? `Webhooks -> ${webhooks.webhooks.length} URL(s)` : 'no destination'}`),
        ...(collector.resumed > 0 ? [`  ${collector.resumed} undelivered message(s) pending in the ${kept}`] : []),
        '',
      ].join('\n'),
    );
  }
  // stdout carries the URL alone, last, so that a script reading it knows the report is written.
  context.stdout.write(`${collector.url}\n`);

  await new Promise<void>((resolve) => {
    if (context.signal.aborted) resolve();
    else context.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  if (config.server.drainDelay > 0) {
    // A second signal (context.force) cuts the delay short.
    logger.info(`collector draining: /readyz answers 503; still taking messages for ${config.server.drainDelay} ms (server.drainDelay)`);
    await collector.drain(context.force);
  }
  process.off('SIGHUP', reloading.listener);
  await reloading.settled();
  logger.info(`collector stopping; undelivered messages stay in the ${kept}`);
  await collector.close();
  return EXIT.ok;
}

function describeStartError(error: unknown, host: string = COLLECTOR_DEFAULTS.host, port: number = COLLECTOR_DEFAULTS.port): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `${host}:${port} is already in use`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return `cannot listen on ${host}: ${code}`;
  if (error instanceof AnalyticsError || code !== undefined) return (error as Error).message;
  throw error;
}
