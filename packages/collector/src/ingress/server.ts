import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { AnalyticsError, describe, displayUrl, isoOf, isPlainObject, LIMITS, log, memberSet, type Message, MESSAGE_TYPES, type MessageType, traitNamed, ValidationError } from 'batched-analytics/internal';
import { AddressSet } from '../config/cidr.js';
import { Cors } from './cors.js';
import type { Arrival } from './enrich.js';
import { ProxyTrust } from './proxy.js';
import { projectSettings, publicBase } from './settings.js';
import { type Access, Unauthorized, WriteKeys } from './auth.js';
import { type CollectorMetrics, METRICS_CONTENT_TYPE } from '../observe/metrics.js';
import type { CollectorConfig, SourceConfig } from '../config/config.js';
import { describeEvent } from '../debugger/detail.js';
import type { EventHub } from '../debugger/events.js';
import { type HostCheck, hostName } from './hosts.js';
import { type Readiness, sendHealth, sendReadiness } from './health.js';
import { discardRest, invalid, readBody, RequestAbortedError, RequestError, sendError, sendJson } from './http.js';
import { parseBatch, parseJson, parseSingle } from './ingest.js';
import { PAGE, PAGE_HEADERS } from '../debugger/page.js';
import { SIGN_IN_HEADERS, signInPage } from '../debugger/sign-in.js';
import { HOST_REFUSED_HEADERS, hostRefusedPage } from '../debugger/host-refused.js';
import type { Reporter } from '../config/report.js';
import { routeMessage, type Router } from './router.js';
import { type DeliveryRecords, StoreUnavailableError } from '../delivery/store.js';
import { describeMessage } from '../debugger/message-records.js';
import { parseRecover } from './recover.js';
import type { Enabled } from '../delivery/deliverer.js';
import type { UrlState } from '../delivery/url-states.js';
import type { Alert } from '../delivery/alert.js';

/** What the routes work with. */
export interface ServerContext {
  /** The running config: a reload replaces it (and `access`), and the next request sees the new ones. */
  config: CollectorConfig;
  router: Router;
  /** The store's delivery records: what a message lookup reads. */
  records: DeliveryRecords;
  hub: EventHub;
  /** Which `Host` headers the live page and its stream answer. */
  hosts: HostCheck;
  /** Who may read the messages and who may change state. */
  access: Access;
  /** What `/readyz` answers. */
  readiness: Readiness;
  /** What `GET /metrics` exposes, and where refused ingestion requests are counted. */
  metrics: CollectorMetrics;
  /** Where requests the store refused or that failed are reported. */
  report: Reporter;
  /** The webhook URLs that fail or are disabled, the alerts raised, and enabling a URL again. */
  webhooks: WebhookControls;
}

/** What the routes about failing receivers work with. */
export interface WebhookControls {
  enable(source: string, url: string): Promise<Enabled>;
  urls(): UrlState[];
  alerts(): readonly Alert[];
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
type Route = {
  method: 'GET' | 'POST';
  handle: Handler;
  /** How the route answers a CORS preflight (`OPTIONS`); absent on routes no web page may call. */
  preflight?: Handler;
  /** Headers every answer of the route carries, a refusal before its handler (405) included. */
  open?: (req: IncomingMessage, res: ServerResponse) => void;
};

/** The single-call routes analytics.js and the mobile libraries send to, by the first letter of the type. */
const SHORT_ROUTES: readonly [string, MessageType][] = [
  ['/v1/t', 'track'],
  ['/v1/i', 'identify'],
  ['/v1/p', 'page'],
  ['/v1/s', 'screen'],
  ['/v1/g', 'group'],
  ['/v1/a', 'alias'],
];

/** The batch routes: the server libraries', analytics.js's (`/v1/b`) and the mobile libraries' (`/v1/import`). */
const BATCH_ROUTES = ['/v1/batch', '/v1/b', '/v1/import'];

/** Most events one `GET /history` returns. */
const HISTORY_PAGE = 500;

/** Largest audience or deletion request body, in bytes: the batch limit is generous enough. */
const BODY_LIMIT = LIMITS.batchBytes;

/** Largest sign-in form body, in bytes: a token and its field name. */
const SIGN_IN_LIMIT = 4_096;

/** The routes a load balancer probes: no credentials, no data. */
const HEALTH_ROUTES = (readiness: Readiness): [string, Route][] => [
  ['/healthz', { method: 'GET', handle: (_, res) => sendHealth(res) }],
  ['/readyz', { method: 'GET', handle: (_, res) => sendReadiness(res, readiness) }],
];

/**
 * The collector's HTTP routes: the ingestion API (`/v1/batch`, `/v1/b`, `/v1/import`,
 * `/v1/<call>`, `/v1/<t|i|p|s|g|a>`) and a source's settings for analytics.js, audiences,
 * deletions, the live debugger (`/`, `/events`, `/history`, `/events/<id>`, replays) with its
 * sign-in (`/sign-in`, `/session`), and the health routes (`/healthz`, `/readyz`).
 */
export function createHandler(context: ServerContext): RequestListener {
  // The sources by write key and by name, indexed again when a reload replaced the config.
  let indexed = { config: context.config, ...index(context.config) };
  // `server` needs a restart: the proxies trusted stay those of the config the collector started with.
  const proxies = new ProxyTrust(new AddressSet(context.config.server.trustProxy));
  const sources = () => (indexed.config === context.config ? indexed : (indexed = { config: context.config, ...index(context.config) }));
  // A route web pages may call: a preflight is answered, and every answer (errors too) is readable
  // by a page of an origin some source allows, until the source is known and decides.
  const crossOrigin = (route: Route): Route => ({
    method: route.method,
    handle: route.handle,
    preflight: (req, res) => sources().cors.preflight(req, res, route.method),
    open: (req, res) => sources().cors.open(req, res),
  });
  const ingest = (parse: (parsed: unknown, arrival: Arrival) => Message[]): Route =>
    crossOrigin({
      method: 'POST',
      handle: async (req, res) => {
        let source: SourceConfig | undefined;
        try {
          const { writeKeys, cors } = sources();
          // A key in the header is checked before the body is read; one in the body, once it is.
          const fromHeader = (source = req.headers.authorization === undefined ? undefined : writeKeys.sourceOf(req.headers));
          const parsed = parseJson(await readBody(req, LIMITS.batchBytes));
          const from = (source = fromHeader ?? writeKeys.sourceOfBody(parsed));
          cors.check(req, res, from);
          const receivedAt = Date.now();
          const arrival: Arrival = { receivedAt, receivedIso: isoOf(receivedAt), ip: proxies.clientAddress(req) };
          const messages = parse(parsed, arrival);
          await context.router.accept(
            messages.map((message) => ({ source: from, message, routes: routeMessage(from, message) })),
            'api',
            receivedAt,
          );
        } catch (error) {
          context.metrics.refused(source?.name, error instanceof AnalyticsError ? error.code : 'ERR_INTERNAL');
          throw error;
        }
        sendJson(res, 200, { success: true });
      },
    });

  // The page and the routes that show data: only under the collector's own names (against DNS
  // rebinding), and only to readers.
  const onOwnHost = (method: Route['method'], handle: Handler): Route => ({
    method,
    handle: (req, res) => {
      if (!context.hosts.allows(req.headers.host)) {
        // A browser (typically at the machine's address after `--host 0.0.0.0`) is told what to change.
        if (req.method === 'GET' && /\btext\/html\b/.test(req.headers.accept ?? '')) {
          return sendHtml(res, 403, hostRefusedPage(hostName(req.headers.host ?? '')), HOST_REFUSED_HEADERS);
        }
        throw new RequestError(403, 'ERR_HOST', `The live page does not answer to the host ${JSON.stringify(req.headers.host ?? '')}; add it to \`allowedHosts\` in the config`);
      }
      return handle(req, res);
    },
  });
  const live = (handle: Handler): Route =>
    onOwnHost('GET', (req, res) => {
      context.access.requireReader(req);
      return handle(req, res);
    });
  const routes = new Map<string, Route>([
    ...HEALTH_ROUTES(context.readiness),
    // A browser that must sign in gets the form instead of the page (401: it shows nothing).
    ['/', onOwnHost('GET', (req, res) => {
      if (context.access.mustSignIn(req)) return sendHtml(res, 401, signInPage(), SIGN_IN_HEADERS);
      // Without a token to sign in with, a request that must have one is told so.
      context.access.requireReader(req);
      sendHtml(res, 200, PAGE, PAGE_HEADERS);
    })],
    // The form on its own, for a browser that may read without signing in but wants to send again.
    ['/sign-in', onOwnHost('GET', (_, res) => sendHtml(res, 200, signInPage(), SIGN_IN_HEADERS))],
    ['/session', onOwnHost('POST', (req, res) => signIn(req, res, context.access))],
    ['/events', live((req, res) => context.hub.attach(res, PAGE_HEADERS, context.access.readerUntil(req)))],
    ['/history', live((req, res) => sendJson(res, 200, history(req, context.hub), PAGE_HEADERS))],
    ['/metrics', live((_, res) => metrics(res, context.metrics))],
    ['/webhooks', live((_, res) => sendJson(res, 200, failingReceivers(context.webhooks), PAGE_HEADERS))],
    ['/v1/webhooks/enable', { method: 'POST', handle: (req, res) => enable(req, res, context) }],
    ...BATCH_ROUTES.map((path): [string, Route] => [path, ingest(parseBatch)]),
    // Each call type has a route of its own, `POST /v1/<type>`, and analytics.js's `/v1/<letter>`.
    ...[...MESSAGE_TYPES.map((type): [string, MessageType] => [`/v1/${type}`, type]), ...SHORT_ROUTES].map(
      ([path, type]): [string, Route] => [path, ingest((parsed, arrival) => parseSingle(parsed, type, arrival))],
    ),
    ['/v1/audiences', { method: 'POST', handle: (req, res) => audiences(req, res, sources().writeKeys.sourceOf(req.headers), context) }],
    ['/v1/deletions', { method: 'POST', handle: (req, res) => deletions(req, res, context) }],
    [
      '/v1/deliveries/recover',
      {
        method: 'POST',
        handle: async (req, res) => {
          context.access.requireAdmin(req, 'Recovering deliveries');
          const request = parseRecover(await jsonBody(req), sources().bySource);
          sendJson(res, 202, { recovered: await context.router.recover(request) });
        },
      },
    ],
  ]);

  // Routes with an id in the path: the detail view of an event, a redelivery, and a source's settings.
  const withId: [RegExp, (id: string) => Route][] = [
    [
      /^\/v1\/projects\/([^/]+)\/settings$/,
      (key) =>
        crossOrigin({
          method: 'GET',
          handle: (req, res) => {
            const { writeKeys, cors } = sources();
            const source = writeKeys.find(decoded(key));
            if (source === undefined) throw new RequestError(404, 'ERR_NOT_FOUND', 'No source has this write key');
            cors.check(req, res, source);
            sendJson(res, 200, projectSettings(source, publicBase(req, context.config.server.publicUrl, proxies)), { 'cache-control': 'no-cache' });
          },
        }),
    ],
    [
      /^\/events\/([\w-]+)$/,
      (id) =>
        live(async (_, res) => {
          const event = context.hub.get(id);
          if (event === undefined) throw new RequestError(404, 'ERR_NOT_FOUND', `No event ${id} is kept (see \`historyEvents\` in the config)`);
          // A forwarded event's id is its delivery's: what was sent and every request are the store's.
          const record = event.routes.some((route) => route.forwarded) ? await context.records.find(id) : undefined;
          sendJson(res, 200, describeEvent(event, record, sources().bySource.get(event.source)?.webhooks), PAGE_HEADERS);
        }),
    ],
    [
      /^\/v1\/messages\/([^/]+)$/,
      (id) =>
        live(async (_, res) => {
          const messageId = decoded(id);
          const records = await context.records.lookup(messageId);
          if (records.length === 0) throw new RequestError(404, 'ERR_NOT_FOUND', 'The store holds no delivery of this messageId (see `retention` in the config)');
          sendJson(res, 200, describeMessage(messageId, records), PAGE_HEADERS);
        }),
    ],
    [
      /^\/v1\/deliveries\/([\w-]+)\/replay$/,
      (id) => ({
        method: 'POST',
        handle: async (req, res) => {
          context.access.requireAdmin(req, 'Sending again');
          const delivery = await context.router.redeliver(id);
          if (delivery === undefined) throw new RequestError(404, 'ERR_NOT_FOUND', `The store holds no delivery ${id} its source would forward now (see \`retention\` in the config)`);
          sendJson(res, 202, { id: delivery, replayOf: id });
        },
      }),
    ],
  ];
  const routeOf = (pathname: string): Route | undefined => {
    const exact = routes.get(pathname);
    if (exact !== undefined) return exact;
    for (const [pattern, route] of withId) {
      const match = pattern.exec(pathname);
      if (match) return route(match[1]!);
    }
    return undefined;
  };

  return dispatch(routeOf, context.report);
}

/**
 * What answers while the store is not open yet: the health routes, and 503 with `Retry-After` for
 * everything else (nothing can be recorded or shown yet).
 */
export function startingHandler(readiness: Readiness, report: Reporter): RequestListener {
  const health = new Map(HEALTH_ROUTES(readiness));
  const starting: Route = {
    method: 'GET',
    handle: () => {
      throw new StoreUnavailableError('the collector is starting: its store is not open yet');
    },
  };
  return dispatch((pathname) => health.get(pathname) ?? starting, report, { anyMethod: starting });
}

/** Answers each request with its route, and every refusal with its status and JSON body. */
function dispatch(routeOf: (pathname: string) => Route | undefined, report: Reporter, options: { anyMethod?: Route } = {}): RequestListener {
  return (req, res) => {
    const pathname = targetOf(req)?.pathname;
    const route = pathname === undefined ? undefined : routeOf(pathname);
    const run = async () => {
      if (route === undefined) throw new RequestError(404, 'ERR_NOT_FOUND', `No route ${pathname ?? JSON.stringify(req.url)}`);
      if (req.method === 'OPTIONS' && route.preflight !== undefined) return route.preflight(req, res);
      route.open?.(req, res);
      if (req.method !== route.method && route !== options.anyMethod) {
        throw new RequestError(405, 'ERR_METHOD', `Expected ${route.method} ${pathname}, got ${req.method}`);
      }
      await route.handle(req, res);
    };
    run().catch((error: unknown) => {
      if (error instanceof RequestAbortedError) {
        // Nobody is left to answer: counted where it was refused (an ingestion route), not an error.
        log('collector: %s %s: %s', req.method, pathname, error.message);
        return void res.destroy();
      }
      if (res.headersSent) return void res.destroy();
      const headers: Record<string, string> = {};
      if (error instanceof StoreUnavailableError) {
        report.error('collector: %s %s refused, the store is unavailable: %s', req.method, pathname, error.message);
        headers['retry-after'] = String(error.retryAfter);
        error = new RequestError(
          503,
          error.code,
          req.method === 'GET'
            ? `The collector cannot read its store now (${error.message}): try again after ${error.retryAfter} s`
            : `The collector cannot record this now (${error.message}); nothing was recorded: send it again after ${error.retryAfter} s`,
        );
      } else if (!(error instanceof RequestError)) {
        report.error('collector: %s %s failed: %O', req.method, pathname, error);
        error = new RequestError(500, 'ERR_INTERNAL', 'The collector could not accept the request; nothing was recorded');
      }
      const refused = error as RequestError;
      if (refused instanceof Unauthorized) headers['www-authenticate'] = refused.challenge;
      if (refused.status === 405) headers.allow = route!.preflight === undefined ? route!.method : `${route!.method}, OPTIONS`;
      // A client still sending would see a reset instead of the 413: read (and drop) the rest.
      if (refused.status === 413 && !discardRest(req)) headers.connection = 'close';
      sendError(res, refused, headers);
    });
  };
}

/**
 * The request's target as a URL: a path (origin form, `//` included, which `new URL` would read as
 * a host), or a whole URL (absolute form, as sent through a proxy); undefined when it is neither.
 */
function targetOf(req: IncomingMessage): URL | undefined {
  const target = req.url ?? '/';
  try {
    return target.startsWith('/') ? new URL(`http://collector${target}`) : new URL(target);
  } catch {
    return undefined;
  }
}

function index(config: CollectorConfig): { writeKeys: WriteKeys; bySource: Map<string, SourceConfig>; cors: Cors } {
  return { writeKeys: new WriteKeys(config.sources), bySource: new Map(config.sources.map((source) => [source.name, source])), cors: new Cors(config.sources) };
}

/** A path segment as sent, `%`-escapes decoded; as it was when they do not decode. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** `GET /metrics`: the Prometheus text exposition. */
async function metrics(res: ServerResponse, registry: CollectorMetrics): Promise<void> {
  const text = await registry.exposition();
  res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' }).end(text);
}

function sendHtml(res: ServerResponse, status: number, html: string, headers: Readonly<Record<string, string>>): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers }).end(html);
}

/**
 * `POST /session` (the sign-in form, `token=<token>`): a session cookie and back to the page (303),
 * or the form again with a message (401). The token is never echoed nor logged.
 */
async function signIn(req: IncomingMessage, res: ServerResponse, access: Access): Promise<void> {
  const token = new URLSearchParams((await readBody(req, SIGN_IN_LIMIT)).toString('utf8')).get('token') ?? '';
  const cookie = access.signIn(token, req);
  if (cookie === undefined) return sendHtml(res, 401, signInPage('That is not a token of this collector.'), SIGN_IN_HEADERS);
  res.writeHead(303, { location: './', 'set-cookie': cookie, 'cache-control': 'no-store' }).end();
}

/** `POST /v1/audiences`: the audience's full membership; identify calls for what changed . */
async function audiences(req: IncomingMessage, res: ServerResponse, source: SourceConfig, context: ServerContext): Promise<void> {
  const body = await jsonBody(req);
  const { name, userIds } = body;
  if (typeof name !== 'string' || name.length === 0) throw invalid('name', `Expected \`name\` to be a non-empty string, got ${describe(name)}`);
  if (!Array.isArray(userIds)) throw invalid('userIds', `Expected \`userIds\` to be an array of user ids, got ${describe(userIds)}`);
  const { trait, synced } = await badRequest(async () => {
    // Validated under the request's names first: the sync validates the ids again, as `members`.
    const made = traitNamed(name, 'name');
    memberSet(userIds, 'userIds');
    return { trait: made, synced: await context.router.syncAudience(source, name, userIds) };
  });
  sendJson(res, 200, { trait, ...synced });
}

/** `POST /v1/deletions`: one delete notification per source with a Webhooks destination . */
async function deletions(req: IncomingMessage, res: ServerResponse, context: ServerContext): Promise<void> {
  context.access.requireAdmin(req, 'Asking for deletions');
  const { userId } = await jsonBody(req);
  if (typeof userId !== 'string' || userId.length === 0) throw invalid('userId', `Expected \`userId\` to be a non-empty string, got ${describe(userId)}`);
  const timestamp = new Date().toISOString();
  const items = context.config.sources
    .filter((source) => source.webhooks !== undefined)
    .map((source) => {
      const message = { type: 'delete' as const, userId, timestamp };
      return { source, message, routes: routeMessage(source, message) };
    });
  await context.router.accept(items, 'deletion');
  sendJson(res, 200, { notifications: items.length, sources: items.map(({ source }) => source.name) });
}

/** `GET /webhooks`: the URLs that fail or are disabled (shown without credentials or query), and the latest alerts. */
function failingReceivers(webhooks: WebhookControls): { urls: UrlState[]; alerts: readonly Alert[] } {
  const urls = webhooks.urls().map(({ url, ...state }) => ({ ...state, url: displayUrl(url) }));
  return { urls, alerts: webhooks.alerts() };
}

/** `POST /v1/webhooks/enable` `{ source, url }`: a disabled URL gets requests again, what was kept for it first. */
async function enable(req: IncomingMessage, res: ServerResponse, context: ServerContext): Promise<void> {
  context.access.requireAdmin(req, 'Enabling a webhook URL');
  const { source, url } = await jsonBody(req);
  if (typeof source !== 'string' || source.length === 0) throw invalid('source', `Expected \`source\` to be a source's name, got ${describe(source)}`);
  if (typeof url !== 'string' || url.length === 0) throw invalid('url', `Expected \`url\` to be one of the source's webhook URLs, got ${describe(url)}`);
  const enabled = await context.webhooks.enable(source, url);
  if (enabled.outcome === 'unknown') throw new RequestError(404, 'ERR_NOT_FOUND', `The source ${JSON.stringify(source)} has no webhook URL ${JSON.stringify(url)}`);
  sendJson(res, 200, { source, url: enabled.url, enabled: true, wasDisabled: enabled.outcome === 'enabled' });
}

/**
 * `GET /history?before=<id>&limit=<n>`: kept events older than one the page shows, newest first;
 * without `before`, the newest ones.
 */
function history(req: IncomingMessage, hub: EventHub): ReturnType<EventHub['older']> {
  const query = targetOf(req)!.searchParams;
  const before = query.get('before') ?? undefined;
  const limit = query.get('limit') === null ? HISTORY_PAGE : Number(query.get('limit'));
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_PAGE) {
    throw invalid('limit', `Expected \`limit\` to be an integer from 1 to ${HISTORY_PAGE}, got ${JSON.stringify(query.get('limit'))}`);
  }
  return hub.older(before, limit);
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parsed = parseJson(await readBody(req, BODY_LIMIT));
  if (!isPlainObject(parsed)) throw invalid('body', `Expected a JSON object, got ${describe(parsed)}`);
  return parsed;
}

/** Runs `run`, answering a `ValidationError` (which names the field at fault) with 400. */
async function badRequest<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw invalid(error.field, error.message);
  }
}
