import { describe, expect, it } from 'vitest';
import { FAILING_DEFAULTS, parseConfig } from '../../src/config/config.js';
import { ConfigError } from 'batched-analytics/internal';
import { newSecret } from '../../../../test/helpers/standard-webhooks.js';

const hook = (url = 'http://127.0.0.1:9000/in') => ({ webhooks: [{ url }] });
const source = (extra: Record<string, unknown> = {}) => ({ name: 'web', writeKey: 'wk_web', ...extra });

function refusal(input: unknown): ConfigError {
  try {
    parseConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('parseConfig accepted it');
}

describe('parseConfig', () => {
  it('accepts the documented shape and keeps every field', () => {
    const rotating = {
      webhooks: [{ url: 'https://b.example/in', rateLimit: 50 }],
      sharedSecret: ['new-secret', 'old-secret'],
      standardWebhooks: { secrets: [newSecret(), newSecret()] },
    };
    // Kept as given: a public URL without a trailing slash, addresses and CIDRs of both families.
    const server = {
      headersTimeout: 2_000,
      requestTimeout: 5_000,
      maxConnections: 50,
      drainDelay: 0,
      sessionLifetime: 3_600_000,
      heapTarget: 0,
      publicUrl: 'https://collect.example.com/analytics',
      trustProxy: ['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1'],
    };
    const input = {
      adminToken: 'secret-token-0123456789',
      readToken: 'reader-token-0123456789',
      sources: [
        source({ destinations: { Webhooks: { webhooks: [{ url: 'https://a.example/in', headers: { 'X-Env': 'dev' } }], sharedSecret: 's' } } }),
        { name: 'bare', writeKey: 'wk_bare', allowedOrigins: ['https://shop.example.com', 'http://localhost:3000'] },
        { name: 'rotating', writeKey: 'wk_rot', destinations: { Webhooks: rotating } },
      ],
      delivery: { timeout: 100, retryWindow: 0, minRetryDelay: 5, maxRetryDelay: 5, maxRequestsPerUrl: 8, breakerThreshold: 2 },
      server,
      queue: { lease: 10_000, pollInterval: 500, maxInFlight: 200 },
      dedupe: { window: 3_600_000 },
      retention: { keepFor: 3_600_000, maxBytes: 1_048_576 },
      allowedHosts: ['collector.internal', '.example.com'],
      historyEvents: 500,
      store: 'postgres://collector@db.internal:5432/analytics',
      postgres: { connectTimeout: 1_000, startTimeout: 0, statementTimeout: 2_000, queryTimeout: 2_500, idleInTransactionTimeout: 60_000 },
    };
    expect(parseConfig(input)).toEqual({
      adminToken: 'secret-token-0123456789',
      readToken: 'reader-token-0123456789',
      sources: [
        { name: 'web', writeKey: 'wk_web', webhooks: { webhooks: [{ url: 'https://a.example/in', headers: { 'X-Env': 'dev' } }], sharedSecret: 's' } },
        { name: 'bare', writeKey: 'wk_bare', allowedOrigins: ['https://shop.example.com', 'http://localhost:3000'] },
        { name: 'rotating', writeKey: 'wk_rot', webhooks: rotating },
      ],
      delivery: { timeout: 100, retryWindow: 0, minRetryDelay: 5, maxRetryDelay: 5, maxRequestsPerUrl: 8, breakerThreshold: 2 },
      server,
      queue: { lease: 10_000, pollInterval: 500, maxInFlight: 200 },
      dedupe: { window: 3_600_000 },
      retention: { keepFor: 3_600_000, maxBytes: 1_048_576 },
      allowedHosts: ['collector.internal', '.example.com'],
      historyEvents: 500,
      store: 'postgres://collector@db.internal:5432/analytics',
      postgres: { connectTimeout: 1_000, startTimeout: 0, statementTimeout: 2_000, queryTimeout: 2_500, idleInTransactionTimeout: 60_000 },
    });
  });

  it('drains for 5 s on SIGTERM, keeps a browser signed in for 12 h, and waits up to 60 s for a database at start, by default', () => {
    const config = parseConfig({ sources: [source()] });
    expect(config.server).toMatchObject({ drainDelay: 5_000, sessionLifetime: 43_200_000, heapTarget: 192 });
    expect(config.postgres.startTimeout).toBe(60_000);
  });

  it('remembers each source\'s messageIds for 24 h by default, 0 to 30 days', () => {
    expect(parseConfig({ sources: [source()] }).dedupe).toEqual({ window: 86_400_000 });
    expect(parseConfig({ sources: [source()], dedupe: { window: 0 } }).dedupe).toEqual({ window: 0 });
  });

  it('keeps settled deliveries for 24 h and the journal\'s within 256 MiB by default; 0 keeps none', () => {
    expect(parseConfig({ sources: [source()] }).retention).toEqual({ keepFor: 86_400_000, maxBytes: 268_435_456 });
    expect(parseConfig({ sources: [source()], retention: { keepFor: 0 } }).retention).toEqual({ keepFor: 0, maxBytes: 268_435_456 });
  });

  it('claims deliveries for 30 s at a time, polls every second, and holds at most 10,000 at once by default', () => {
    expect(parseConfig({ sources: [source()] }).queue).toEqual({ lease: 30_000, pollInterval: 1_000, maxInFlight: 10_000 });
  });

  it('bounds a database that does not answer by default: 3 s to connect, 3 s for the server to run a statement, 4 s for any answer, 5 s idle in a transaction', () => {
    expect(parseConfig({ sources: [source()] }).postgres).toEqual({ connectTimeout: 3_000, startTimeout: 60_000, statementTimeout: 3_000, queryTimeout: 4_000, idleInTransactionTimeout: 5_000 });
    expect(parseConfig({ sources: [source()], postgres: { queryTimeout: 9_000 } }).postgres).toEqual({
      connectTimeout: 3_000,
      startTimeout: 60_000,
      statementTimeout: 3_000,
      queryTimeout: 9_000,
      idleInTransactionTimeout: 5_000,
    });
  });

  it('bounds slow clients by default: 10 s for headers, 30 s for a whole request, 1,000 connections', () => {
    expect(parseConfig({ sources: [source()] })).toMatchObject({ server: { headersTimeout: 10_000, requestTimeout: 30_000, maxConnections: 1_000 }, allowedHosts: [], historyEvents: 10_000 });
    // No proxy is trusted, the settings name the collector as each request reached it, and any origin may send.
    const defaults = parseConfig({ sources: [source()] });
    expect(defaults.server.trustProxy).toEqual([]);
    expect(defaults.server.publicUrl).toBeUndefined();
    expect(defaults.sources[0]!.allowedOrigins).toBeUndefined();
  });

  it('disables a URL after 5 days of failures and alerts after 10 in a row by default; alerts go nowhere unless configured', () => {
    expect(FAILING_DEFAULTS).toEqual({ disableAfter: 432_000_000, failingAfter: 10 });
    const defaults = parseConfig({ sources: [source()] });
    expect(defaults.delivery.disableAfter).toBeUndefined();
    expect(defaults.alerts).toBeUndefined();
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const config = parseConfig({ sources: [source()], delivery: { disableAfter: 5_000, failingAfter: 3 }, alerts: { url: 'https://ops.example.com/alerts', secret } });
    expect(config.delivery).toEqual({ disableAfter: 5_000, failingAfter: 3 });
    expect(config.alerts).toEqual({ url: 'https://ops.example.com/alerts', secret });
  });

  it('refuses an alert secret that is not a Standard Webhooks secret without quoting it', () => {
    const bad = 'whsec_not-base64-at-all!';
    let thrown: unknown;
    try {
      parseConfig({ sources: [source()], alerts: { url: 'https://ops.example.com/alerts', secret: bad } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'ERR_CONFIG', option: 'alerts.secret' });
    expect((thrown as Error).message).not.toContain('not-base64');
  });

  it('keeps a public URL without its trailing slash, and origins as browsers send them', () => {
    const config = parseConfig({ sources: [source({ allowedOrigins: ['https://shop.example.com'] })], server: { publicUrl: 'https://collect.example.com/' } });
    expect(config.server.publicUrl).toBe('https://collect.example.com');
    expect(config.sources[0]!.allowedOrigins).toEqual(['https://shop.example.com']);
  });

  it.each([
    [[], 'config', 'Expected `config` to be an object, got an array'],
    [{ sources: [source()], extra: 1 }, 'config.extra', 'Expected the config to have only `adminToken`, `readToken`, `sources`, `delivery`, `server`, `queue`, `dedupe`, `retention`, `allowedHosts`, `historyEvents`, `store`, `postgres`, `alerts`, got `extra`'],
    [{ sources: [source()], postgres: 'fast' }, 'postgres', 'Expected `postgres` to be an object, got `"fast"` (string)'],
    [
      { sources: [source()], postgres: { connectionTimeout: 1_000 } },
      'postgres.connectionTimeout',
      'Expected `postgres` to have only `connectTimeout`, `startTimeout`, `statementTimeout`, `queryTimeout`, `idleInTransactionTimeout`, got `connectionTimeout`: did you mean `connectTimeout`?',
    ],
    [{ sources: [source()], postgres: { connectTimeout: 50 } }, 'postgres.connectTimeout', 'Expected `postgres.connectTimeout` to be an integer >= 100, got `50` (number)'],
    [{ sources: [source()], postgres: { statementTimeout: 1_500.5 } }, 'postgres.statementTimeout', 'Expected `postgres.statementTimeout` to be an integer >= 100, got `1500.5` (number)'],
    [{ sources: [source()], postgres: { queryTimeout: 120_000 } }, 'postgres.queryTimeout', 'Expected `postgres.queryTimeout` to be at most 60000, got `120000`'],
    [{ sources: [source()], postgres: { idleInTransactionTimeout: '5s' } }, 'postgres.idleInTransactionTimeout', 'Expected `postgres.idleInTransactionTimeout` to be an integer >= 100, got `"5s"` (string)'],
    [
      { sources: [source()], postgres: { statementTimeout: 5_000 } },
      'postgres.queryTimeout',
      'Expected `postgres.queryTimeout` to be >= `postgres.statementTimeout` (5000), got `4000`',
    ],
    [{ sources: [source()], store: 'mysql://u@h/db' }, 'store', 'Expected `store` to be a PostgreSQL URL like postgres://USER@HOST:PORT/DB, got `"mysql://u@h/db"` (string)'],
    [{ sources: [source()], store: 'http://u:pw@h/db' }, 'store', 'Expected `store` to be a PostgreSQL URL like postgres://USER@HOST:PORT/DB, got `"http://u:***@h/db"` (string)'],
    [{ sources: [source()], store: 5432 }, 'store', 'Expected `store` to be a PostgreSQL URL like postgres://USER@HOST:PORT/DB, got `5432` (number)'],
    [{ sources: [source()], historyEvents: 100 }, 'historyEvents', 'Expected `historyEvents` to be an integer >= 200, got `100` (number)'],
    [{ sources: [source()], queue: { lease: 50 } }, 'queue.lease', 'Expected `queue.lease` to be an integer >= 100, got `50` (number)'],
    [{ sources: [source()], queue: { maxInFlight: 100_001 } }, 'queue.maxInFlight', 'Expected `queue.maxInFlight` to be at most 100000, got `100001`'],
    [{ sources: [source()], dedupe: { window: -1 } }, 'dedupe.window', 'Expected `dedupe.window` to be an integer >= 0, got `-1` (number)'],
    [{ sources: [source()], dedupe: { window: 2_592_000_001 } }, 'dedupe.window', 'Expected `dedupe.window` to be at most 2592000000, got `2592000001`'],
    [{ sources: [source()], retention: { keepFor: -1 } }, 'retention.keepFor', 'Expected `retention.keepFor` to be an integer >= 0, got `-1` (number)'],
    [{ sources: [source()], retention: { hours: 5 } }, 'retention.hours', 'Expected `retention` to have only `keepFor`, `maxBytes`, got `hours`'],
    [{ sources: [source()], dedupe: { windowMs: 5 } }, 'dedupe.windowMs', 'Expected `dedupe` to have only `window`, got `windowMs`: did you mean `window`?'],
    [{ sources: [source()], queue: { poll: 5 } }, 'queue.poll', 'Expected `queue` to have only `lease`, `pollInterval`, `maxInFlight`, got `poll`'],
    [{ sources: [source()], server: { headersTimeout: 60_000 } }, 'server.headersTimeout', 'Expected `server.headersTimeout` to be at most 30000, got `60000`'],
    [{ sources: [source()], server: { requestTimeout: 0 } }, 'server.requestTimeout', 'Expected `server.requestTimeout` to be an integer >= 1, got `0` (number)'],
    [
      { sources: [source()], server: { headersTimeout: 5_000, requestTimeout: 1_000 } },
      'server.requestTimeout',
      'Expected `server.requestTimeout` to be >= `server.headersTimeout` (5000), got `1000`',
    ],
    [{ sources: [source()], server: { maxConnection: 5 } }, 'server.maxConnection', 'Expected `server` to have only `headersTimeout`, `requestTimeout`, `maxConnections`, `drainDelay`, `sessionLifetime`, `heapTarget`, `publicUrl`, `trustProxy`, got `maxConnection`: did you mean `maxConnections`?'],
    [{ sources: [source()], server: { drainDelay: 120_000 } }, 'server.drainDelay', 'Expected `server.drainDelay` to be at most 60000, got `120000`'],
    [{ sources: [source()], server: { heapTarget: -1 } }, 'server.heapTarget', 'Expected `server.heapTarget` to be an integer >= 0, got `-1` (number)'],
    [{ sources: [source()], server: { sessionLifetime: 1_000 } }, 'server.sessionLifetime', 'Expected `server.sessionLifetime` to be an integer >= 60000, got `1000` (number)'],
    [{ sources: [source()], postgres: { startTimeout: -1 } }, 'postgres.startTimeout', 'Expected `postgres.startTimeout` to be an integer >= 0, got `-1` (number)'],
    [{ sources: [source()], readToken: 'short' }, 'readToken', 'Expected `readToken` to be a string of at least 16 characters, got a string of 5 characters (not shown: it may hold a secret)'],
    [
      { sources: [source()], adminToken: 'same-token-0123456789', readToken: 'same-token-0123456789' },
      'readToken',
      'Expected `readToken` to differ from `adminToken`: the same token cannot both allow and refuse replays',
    ],
    [{ sources: [source()], allowedHosts: 'collector.internal' }, 'allowedHosts', 'Expected `allowedHosts` to be an array of host names, got `"collector.internal"` (string)'],
    [
      { sources: [source()], allowedHosts: ['ok.internal', 'with.port:8088'] },
      'allowedHosts[1]',
      'Expected `allowedHosts[1]` to be a host name without port, like "collector.internal" or ".example.com", got `"with.port:8088"` (string)',
    ],
    [{ sources: [source()], delivery: { maxRequestsPerUrl: 0 } }, 'delivery.maxRequestsPerUrl', 'Expected `delivery.maxRequestsPerUrl` to be an integer >= 1, got `0` (number)'],
    [{ sources: [source()], delivery: { disableAfter: 0 } }, 'delivery.disableAfter', 'Expected `delivery.disableAfter` to be an integer >= 1, got `0` (number)'],
    [{ sources: [source()], delivery: { failingAfter: 2.5 } }, 'delivery.failingAfter', 'Expected `delivery.failingAfter` to be an integer >= 1, got `2.5` (number)'],
    [{ sources: [source()], alerts: 'https://ops.example.com' }, 'alerts', 'Expected `alerts` to be an object, got `"https://ops.example.com"` (string)'],
    [{ sources: [source()], alerts: { url: 'https://ops.example.com', secret: 'x', retries: 3 } }, 'alerts.retries', 'Expected `alerts` to have only `url`, `secret`, got `retries`'],
    [{ sources: [source()], alerts: { url: 'ftp://ops.example.com', secret: 'x' } }, 'alerts.url', 'Expected `alerts.url` to be an absolute http or https URL without credentials'],
    [{ sources: [source()], alerts: { url: 'https://ops.example.com' } }, 'alerts.secret', 'Expected `alerts.secret` to be a non-empty string, got `undefined`'],
    [{ sources: [source({ name: '@alerts' })] }, 'sources[0].name', 'Expected `sources[0].name` to be another name: "@alerts" is the collector\'s own, for its alerts'],
    [{ sources: {} }, 'sources', 'Expected `sources` to be a non-empty array, got an instance of Object'],
    [{ sources: [source()], adminToken: '' }, 'adminToken', 'Expected `adminToken` to be a string of at least 16 characters, got a string of 0 characters (not shown: it may hold a secret)'],
    // Tokens a request could never present: a bearer token is one run of visible characters.
    [{ sources: [source()], adminToken: 'x' }, 'adminToken', 'Expected `adminToken` to be a string of at least 16 characters, got a string of 1 character (not shown: it may hold a secret)'],
    [
      { sources: [source()], adminToken: 'correct horse battery staple' },
      'adminToken',
      'Expected `adminToken` to be visible ASCII characters without spaces (a bearer token), got a string of 28 characters (not shown: it may hold a secret)',
    ],
    [{ sources: [source()], adminToken: 'token-with-tail\n' }, 'adminToken', 'Expected `adminToken` to be visible ASCII characters without spaces (a bearer token), got a string of 16 characters (not shown: it may hold a secret)'],
    // The basic-auth user ends at the first colon: such a key could never be matched.
    [{ sources: [source()], server: { publicUrl: 'collect.example.com' } }, 'server.publicUrl', 'Expected `server.publicUrl` to be an http or https URL without credentials, query or fragment, like "https://collect.example.com", got `"collect.example.com"` (string)'],
    [{ sources: [source()], server: { publicUrl: 'https://collect.example.com/?a=1' } }, 'server.publicUrl', 'Expected `server.publicUrl` to be an http or https URL without credentials, query or fragment, like "https://collect.example.com", got `"https://collect.example.com/?…"` (string)'],
    [{ sources: [source()], server: { trustProxy: '10.0.0.1' } }, 'server.trustProxy', 'Expected `server.trustProxy` to be an array of addresses or CIDRs, got `"10.0.0.1"` (string)'],
    [{ sources: [source()], server: { trustProxy: ['10.0.0.0/33'] } }, 'server.trustProxy[0]', 'Expected `server.trustProxy[0]` to be an IP address or a CIDR, like "10.0.0.1", "10.0.0.0/8" or "fd00::/8", got `"10.0.0.0/33"` (string)'],
    [{ sources: [source()], server: { trustProxy: ['::1', 'proxy.internal'] } }, 'server.trustProxy[1]', 'Expected `server.trustProxy[1]` to be an IP address or a CIDR, like "10.0.0.1", "10.0.0.0/8" or "fd00::/8", got `"proxy.internal"` (string)'],
    [{ sources: [source({ allowedOrigins: 'https://a.example' })] }, 'sources[0].allowedOrigins', 'Expected `sources[0].allowedOrigins` to be an array of origins, got `"https://a.example"` (string)'],
    [
      { sources: [source({ allowedOrigins: ['https://a.example/'] })] },
      'sources[0].allowedOrigins[0]',
      'Expected `sources[0].allowedOrigins[0]` to be an origin (scheme, host and port, no path or trailing slash), like "https://shop.example.com", got `"https://a.example/"` (string)',
    ],
    [{ sources: [source({ writeKey: 'wk:web' })] }, 'sources[0].writeKey', 'Expected `sources[0].writeKey` to have no `:` (clients send it as the basic-auth user, which ends at the first colon), got a string of 6 characters (not shown: it may hold a secret)'],
    [{ sources: [source({ writeKey: 'wk\tweb' })] }, 'sources[0].writeKey', 'Expected `sources[0].writeKey` to have no control characters, got a string of 6 characters (not shown: it may hold a secret)'],
    [{ sources: [source({ name: 3 })] }, 'sources[0].name', 'Expected `sources[0].name` to be a non-empty string, got `3` (number)'],
    [{ sources: [source(), source({ writeKey: 'other' })] }, 'sources[1].name', 'Expected `sources[1].name` to be unique, got the same as `sources[0].name`'],
    [{ sources: [source(), source({ name: 'other' })] }, 'sources[1].writeKey', 'Expected `sources[1].writeKey` to be unique, got the same as `sources[0].writeKey`'],
    [{ sources: [source({ destinations: { webhooks: hook() } })] }, 'sources[0].destinations.webhooks', 'Expected `sources[0].destinations` to have only `Webhooks`, got `webhooks`: did you mean `Webhooks`?'],
    [
      { sources: [source({ destinations: { Webhooks: hook('not a url') } })] },
      'sources[0].destinations.Webhooks.webhooks[0].url',
      'Expected `sources[0].destinations.Webhooks.webhooks[0].url` to be an absolute http or https URL, got `"not a url"` (string)',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { webhooks: Array.from({ length: 6 }, () => ({ url: 'http://x.test' })) } } })] },
      'sources[0].destinations.Webhooks.webhooks',
      'Expected `sources[0].destinations.Webhooks.webhooks` to be an array of 1 to 5 entries, got 6 entries',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { ...hook(), secret: 'typo' } } })] },
      'sources[0].destinations.Webhooks.secret',
      'Expected `sources[0].destinations.Webhooks` to have only `webhooks`, `sharedSecret`, `standardWebhooks`, got `secret`',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { ...hook(), sharedScret: 's3cret' } } })] },
      'sources[0].destinations.Webhooks.sharedScret',
      'Expected `sources[0].destinations.Webhooks` to have only `webhooks`, `sharedSecret`, `standardWebhooks`, got `sharedScret`: did you mean `sharedSecret`?',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { ...hook(), standardWebhooks: { secrets: ['whsec_short'] } } } })] },
      'sources[0].destinations.Webhooks.standardWebhooks.secrets[0]',
      'Expected `sources[0].destinations.Webhooks.standardWebhooks.secrets[0]` to be "whsec_" followed by the base64 of 24 to 64 bytes, got another string',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { ...hook(), standardWebhooks: { secret: [] } } } })] },
      'sources[0].destinations.Webhooks.standardWebhooks.secret',
      'Expected no `sources[0].destinations.Webhooks.standardWebhooks.secret`: `standardWebhooks` has only `secrets`',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { ...hook(), sharedSecret: ['old-secret', 'old-secret'] } } })] },
      'sources[0].destinations.Webhooks.sharedSecret[1]',
      'Expected `sources[0].destinations.Webhooks.sharedSecret[1]` to be listed once, got the same secret as entry 0',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { webhooks: [{ url: 'http://x.test', rateLimit: 0 }] } } })] },
      'sources[0].destinations.Webhooks.webhooks[0].rateLimit',
      'Expected `sources[0].destinations.Webhooks.webhooks[0].rateLimit` to be an integer >= 1, got `0` (number)',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { webhooks: [{ url: 'http://x.test', rate: 5 }] } } })] },
      'sources[0].destinations.Webhooks.webhooks[0].rate',
      'Expected no `sources[0].destinations.Webhooks.webhooks[0].rate`: a webhook has only `url`, `headers`, `rateLimit`, `filter`',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { webhooks: [{ url: 'http://x.test' }, { url: 'http://y.test', filter: { types: ['track', 'order'] } }] } } })] },
      'sources[0].destinations.Webhooks.webhooks[1].filter.types[1]',
      'Expected `sources[0].destinations.Webhooks.webhooks[1].filter.types[1]` to be one of page, screen, identify, track, alias, group, delete, got `"order"` (string)',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { webhooks: [{ url: 'http://x.test', filter: { events: [] } }] } } })] },
      'sources[0].destinations.Webhooks.webhooks[0].filter.events',
      'Expected `sources[0].destinations.Webhooks.webhooks[0].filter.events` to be a non-empty array of strings, got an empty array',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { webhooks: [{ url: 'http://x.test', filter: { events: ['Order Completed', 7] } }] } } })] },
      'sources[0].destinations.Webhooks.webhooks[0].filter.events[1]',
      'Expected `sources[0].destinations.Webhooks.webhooks[0].filter.events[1]` to be a non-empty string, got `7` (number)',
    ],
    [
      // Both entries the message names, with their full paths.
      { sources: [source({ destinations: { Webhooks: { webhooks: [{ url: 'http://x.test', filter: { types: ['identify'], events: ['x'] } }] } } })] },
      'sources[0].destinations.Webhooks.webhooks[0].filter.events',
      'Expected `sources[0].destinations.Webhooks.webhooks[0].filter.types` to list `track` when `sources[0].destinations.Webhooks.webhooks[0].filter.events` is given: only tracks have an event',
    ],
    [
      // Below the destination's default `minRetryDelay` (1000): named where it is written, in `delivery`.
      { sources: [source({ destinations: { Webhooks: hook() } })], delivery: { maxRetryDelay: 500 } },
      'delivery.maxRetryDelay',
      'Expected `delivery.maxRetryDelay` to be an integer >= 1000 and <= 2147483647, got `500` (number)',
    ],
    [
      { sources: [source({ destinations: { Webhooks: { webhooks: [{ url: 'http://x.test', filter: { types: ['identify'], eventz: ['x'] } }] } } })] },
      'sources[0].destinations.Webhooks.webhooks[0].filter.eventz',
      'Expected no `sources[0].destinations.Webhooks.webhooks[0].filter.eventz`: a filter has only `types` and `events` (did you mean `events`?)',
    ],
    [
      { sources: [source({ destinations: { Webhooks: hook('http://user:pass@x.test/in') } })] },
      'sources[0].destinations.Webhooks.webhooks[0].url',
      'Expected `sources[0].destinations.Webhooks.webhooks[0].url` to have no user name or password (they would not be sent); put an `Authorization` header in its `headers` instead',
    ],
    [{ sources: [source()], delivery: { timeout: 0 } }, 'delivery.timeout', 'Expected `delivery.timeout` to be an integer >= 1, got `0` (number)'],
    [
      { sources: [source()], delivery: { minRetryDelay: 10, maxRetryDelay: 5 } },
      'delivery.maxRetryDelay',
      'Expected `delivery.maxRetryDelay` to be >= `delivery.minRetryDelay` (10), got `5`',
    ],
  ])('refuses %j naming %s', (input, option, message) => {
    const error = refusal(input);
    expect(error.option).toBe(option);
    expect(error.message).toBe(message);
  });
});
