import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { AnalyticsError, audienceTrait, describe, isPlainObject, LIMITS, MESSAGE_TYPES, ValidationError } from 'batched-analytics/internal';
import { hasBearer, sourceOf } from './auth.js';
import type { CollectorConfig, SourceConfig } from '../config/config.js';
import { describeEvent } from '../debugger/detail.js';
import type { EventHub } from '../debugger/events.js';
import type { HostCheck } from './hosts.js';
import { discardRest, readBody, RequestError, sendError, sendJson } from './http.js';
import { parseBatch, parseJson, parseSingle } from './ingest.js';
import { PAGE, PAGE_HEADERS } from '../debugger/page.js';
import { report } from '../config/report.js';
import { routeMessage, type Router } from './router.js';
import { StoreUnavailableError } from '../delivery/store.js';
import { type CollectorMetrics, METRICS_CONTENT_TYPE } from '../observe/metrics.js';

/** What the routes work with. */
export interface ServerContext {
  /** The running config: a reload replaces it, and the next request sees the new one. */
  config: CollectorConfig;
  /** What `GET /metrics` exposes, and where refused ingestion requests are counted. */
  metrics: CollectorMetrics;
  router: Router;
  hub: EventHub;
  /** Which `Host` headers the live page and its stream answer. */
  hosts: HostCheck;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
type Route = { method: 'GET' | 'POST'; handle: Handler };

/** Most events one `GET /history` returns. */
const HISTORY_PAGE = 500;

/** Largest audience or deletion request body, in bytes: the batch limit is generous enough. */
const BODY_LIMIT = LIMITS.batchBytes;

/**
 * The collector's HTTP routes: the ingestion API (`/v1/batch`, `/v1/<call>`), audiences,
 * deletions and the live debugger (`/`, `/events`).
 */
export function createHandler(context: ServerContext): RequestListener {
  // The sources by write key and by name, indexed again when a reload replaced the config.
  let indexed = { config: context.config, ...index(context.config) };
  const sources = () => (indexed.config === context.config ? indexed : (indexed = { config: context.config, ...index(context.config) }));
  const ingest = (parse: (body: Buffer) => ReturnType<typeof parseBatch>): Route => ({
    method: 'POST',
    handle: async (req, res) => {
      let source: SourceConfig | undefined;
      try {
        source = authenticate(req, sources().byWriteKey);
        const messages = parse(await readBody(req, LIMITS.batchBytes));
        const from = source;
        await context.router.accept(
          messages.map((message) => ({ source: from, message, routes: routeMessage(from, message) })),
          'api',
        );
      } catch (error) {
        context.metrics.refused(source?.name, error instanceof AnalyticsError ? error.code : 'ERR_INTERNAL');
        throw error;
      }
      sendJson(res, 200, { success: true });
    },
  });

  // The unauthenticated routes that show data: only under the collector's own names.
  const live = (handle: Handler): Route => ({
    method: 'GET',
    handle: (req, res) => {
      if (!context.hosts.allows(req.headers.host)) {
        throw new RequestError(403, 'ERR_HOST', `The live page does not answer to the host ${JSON.stringify(req.headers.host ?? '')}; add it to \`allowedHosts\` in the config`);
      }
      return handle(req, res);
    },
  });
  const routes = new Map<string, Route>([
    ['/', live((_, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...PAGE_HEADERS }).end(PAGE))],
    ['/events', live((_, res) => context.hub.attach(res, PAGE_HEADERS))],
    ['/history', live((req, res) => sendJson(res, 200, history(req, context.hub), PAGE_HEADERS))],
    // Guarded as the page is: the one place to switch to another guard.
    ['/metrics', live((_, res) => metrics(res, context.metrics))],
    ['/v1/batch', ingest(parseBatch)],
    // Each call type has a route of its own, `POST /v1/<type>`.
    ...MESSAGE_TYPES.map((type): [string, Route] => [`/v1/${type}`, ingest((body) => [parseSingle(body, type)])]),
    ['/v1/audiences', { method: 'POST', handle: (req, res) => audiences(req, res, authenticate(req, sources().byWriteKey), context) }],
    ['/v1/deletions', { method: 'POST', handle: (req, res) => deletions(req, res, context) }],
  ]);

  // Routes with an id in the path: the detail view of an event, and a redelivery.
  const withId: [RegExp, (id: string) => Route][] = [
    [
      /^\/events\/([\w-]+)$/,
      (id) =>
        live((_, res) => {
          const event = context.hub.get(id);
          if (event === undefined) throw new RequestError(404, 'ERR_NOT_FOUND', `No event ${id} is kept (see \`historyEvents\` in the config)`);
          sendJson(res, 200, describeEvent(event, context.hub.webhookOf(id), sources().bySource.get(event.source)?.webhooks), PAGE_HEADERS);
        }),
    ],
    [
      /^\/v1\/deliveries\/([\w-]+)\/replay$/,
      (id) => ({
        method: 'POST',
        handle: async (req, res) => {
          requireAdmin(req, context, 'redelivery');
          const delivery = await context.router.redeliver(id);
          if (delivery === undefined) throw new RequestError(404, 'ERR_NOT_FOUND', `No forwarded event ${id} is kept to send again (see \`historyEvents\` in the config)`);
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

  return (req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://collector').pathname;
    const route = routeOf(pathname);
    const run = async () => {
      if (route === undefined) throw new RequestError(404, 'ERR_NOT_FOUND', `No route ${pathname}`);
      if (req.method !== route.method) {
        throw new RequestError(405, 'ERR_METHOD', `Expected ${route.method} ${pathname}, got ${req.method}`);
      }
      await route.handle(req, res);
    };
    run().catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      const headers: Record<string, string> = {};
      if (error instanceof StoreUnavailableError) {
        report('error', 'collector: %s %s refused, the store is unavailable: %s', req.method, pathname, error.message);
        headers['retry-after'] = String(error.retryAfter);
        error = new RequestError(503, error.code, `The collector cannot record this now (${error.message}); nothing was recorded: send it again after ${error.retryAfter} s`);
      } else if (!(error instanceof RequestError)) {
        report('error', 'collector: %s %s failed: %O', req.method, pathname, error);
        error = new RequestError(500, 'ERR_INTERNAL', 'The collector could not accept the request; nothing was recorded');
      }
      const refused = error as RequestError;
      if (refused.status === 401) headers['www-authenticate'] = 'Basic realm="batched-analytics", charset="UTF-8"';
      if (refused.status === 405) headers.allow = route!.method;
      // A client still sending would see a reset instead of the 413: read (and drop) the rest.
      if (refused.status === 413 && !discardRest(req)) headers.connection = 'close';
      sendError(res, refused, headers);
    });
  };
}

function index(config: CollectorConfig): { byWriteKey: Map<string, SourceConfig>; bySource: Map<string, SourceConfig> } {
  return {
    byWriteKey: new Map(config.sources.map((source) => [source.writeKey, source])),
    bySource: new Map(config.sources.map((source) => [source.name, source])),
  };
}

/** `GET /metrics`: the Prometheus text exposition. */
async function metrics(res: ServerResponse, registry: CollectorMetrics): Promise<void> {
  const text = await registry.exposition();
  res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' }).end(text);
}

function authenticate(req: IncomingMessage, byWriteKey: ReadonlyMap<string, SourceConfig>): SourceConfig {
  const source = sourceOf(req.headers, byWriteKey);
  if (source === undefined) {
    const why = req.headers.authorization === undefined ? 'no Authorization header' : 'an unknown write key';
    throw new RequestError(401, 'ERR_UNAUTHORIZED', `Expected a source's write key as the basic-auth user, got ${why}`);
  }
  return source;
}

/** `POST /v1/audiences`: the audience's full membership; identify calls for what changed . */
async function audiences(req: IncomingMessage, res: ServerResponse, source: SourceConfig, context: ServerContext): Promise<void> {
  const body = await jsonBody(req);
  const { name, userIds } = body;
  if (typeof name !== 'string' || name.length === 0) throw invalid('name', `Expected \`name\` to be a non-empty string, got ${describe(name)}`);
  if (!Array.isArray(userIds)) throw invalid('userIds', `Expected \`userIds\` to be an array of user ids, got ${describe(userIds)}`);
  const trait = await renamed('name', () => audienceTrait(name));
  const synced = await renamed('userIds', () => context.router.syncAudience(source, name, userIds));
  sendJson(res, 200, { trait, ...synced });
}

/** `POST /v1/deletions`: one delete notification per source with a Webhooks destination . */
async function deletions(req: IncomingMessage, res: ServerResponse, context: ServerContext): Promise<void> {
  requireAdmin(req, context, 'deletions');
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

/** `GET /history?before=<id>&limit=<n>`: kept events older than one the page shows, newest first. */
function history(req: IncomingMessage, hub: EventHub): ReturnType<EventHub['older']> {
  const query = new URL(req.url ?? '/', 'http://collector').searchParams;
  const before = query.get('before');
  if (before === null) throw invalid('before', 'Expected `before`: the id of the oldest event the page shows');
  const limit = query.get('limit') === null ? HISTORY_PAGE : Number(query.get('limit'));
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_PAGE) {
    throw invalid('limit', `Expected \`limit\` to be an integer from 1 to ${HISTORY_PAGE}, got ${JSON.stringify(query.get('limit'))}`);
  }
  return hub.older(before, limit);
}

/** The admin routes (deletions, redeliveries) need `Authorization: Bearer <adminToken>`. */
function requireAdmin(req: IncomingMessage, context: ServerContext, what: string): void {
  if (hasBearer(req.headers, context.config.adminToken)) return;
  const why = context.config.adminToken === undefined ? `${what} are disabled: the config has no \`adminToken\`` : 'Expected `Authorization: Bearer <adminToken>`';
  throw new RequestError(401, 'ERR_UNAUTHORIZED', why);
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parsed = parseJson(await readBody(req, BODY_LIMIT));
  if (!isPlainObject(parsed)) throw invalid('body', `Expected a JSON object, got ${describe(parsed)}`);
  return parsed;
}

/** Runs an audience helper, naming its arguments' faults by the request's field (`members[2]` is `userIds[2]`). */
async function renamed<T>(field: 'name' | 'userIds', run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const own = error.field.replace(/^(audience|members)/, field);
    throw invalid(own, error.message.replace(`\`${error.field}\``, `\`${own}\``));
  }
}

function invalid(field: string, message: string): RequestError {
  return new RequestError(400, 'ERR_VALIDATION', message, field);
}
