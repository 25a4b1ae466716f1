import { describe, expect, it } from 'vitest';
import { newSecret } from '../../../../test/helpers/standard-webhooks.js';
import { AnalyticsError, ConfigError, WebhookDestination, type WebhookDestinationOptions, type WebhookSettings } from '../../src/webhooks/index.js';

const url = 'https://hooks.test/a';

function configError(settings: unknown, options?: WebhookDestinationOptions): ConfigError {
  try {
    new WebhookDestination(settings as WebhookSettings, options);
  } catch (error) {
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('WebhookDestination settings', () => {
  it('accepts 1 to 5 http(s) URLs with static headers and a shared secret', async () => {
    const webhooks = [1, 2, 3, 4, 5].map((n) => ({ url: `${n % 2 ? 'https' : 'http'}://hooks.test/${n}`, headers: { 'X-Token': `t${n}` } }));
    await new WebhookDestination({ webhooks, sharedSecret: 'shh' }).close();
  });

  it.each([
    ['no settings', undefined, 'settings'],
    ['no webhooks', {}, 'webhooks'],
    ['an empty list', { webhooks: [] }, 'webhooks'],
    ['six webhooks', { webhooks: Array.from({ length: 6 }, () => ({ url })) }, 'webhooks'],
    ['an entry that is a string', { webhooks: [{ url }, url] }, 'webhooks[1]'],
    ['a relative URL', { webhooks: [{ url: '/hook' }] }, 'webhooks[0].url'],
    ['an ftp URL', { webhooks: [{ url }, { url: 'ftp://hooks.test/x' }] }, 'webhooks[1].url'],
    ['a URL that is not a string', { webhooks: [{ url: new URL(url) }] }, 'webhooks[0].url'],
    ['headers that are an array', { webhooks: [{ url, headers: [] }] }, 'webhooks[0].headers'],
    ['a header name with a space', { webhooks: [{ url, headers: { 'X Token': 'a' } }] }, 'webhooks[0].headers.X Token'],
    ['a header value with a line break', { webhooks: [{ url, headers: { 'X-Token': 'a\r\nHost: evil' } }] }, 'webhooks[0].headers.X-Token'],
    ['a header value that is a number', { webhooks: [{ url, headers: { 'X-Count': 3 } }] }, 'webhooks[0].headers.X-Count'],
    ['a header the destination sets', { webhooks: [{ url, headers: { 'X-Signature': 'forged' } }] }, 'webhooks[0].headers.X-Signature'],
    ['a connection header', { webhooks: [{ url, headers: { 'Transfer-Encoding': 'chunked' } }] }, 'webhooks[0].headers.Transfer-Encoding'],
    ['a header twice', { webhooks: [{ url, headers: { 'X-Token': 'a', 'x-token': 'b' } }] }, 'webhooks[0].headers.x-token'],
    ['an empty shared secret', { webhooks: [{ url }], sharedSecret: '' }, 'sharedSecret'],
    ['an empty list of shared secrets', { webhooks: [{ url }], sharedSecret: [] }, 'sharedSecret'],
    ['four shared secrets', { webhooks: [{ url }], sharedSecret: ['a', 'b', 'c', 'd'] }, 'sharedSecret'],
    ['an empty shared secret in a list', { webhooks: [{ url }], sharedSecret: ['a', ''] }, 'sharedSecret[1]'],
    ['a shared secret twice', { webhooks: [{ url }], sharedSecret: ['a', 'b', 'a'] }, 'sharedSecret[2]'],
    ['standardWebhooks that is a string', { webhooks: [{ url }], standardWebhooks: newSecret() }, 'standardWebhooks'],
    ['standardWebhooks without secrets', { webhooks: [{ url }], standardWebhooks: {} }, 'standardWebhooks.secrets'],
    ['a misspelt standardWebhooks key', { webhooks: [{ url }], standardWebhooks: { secret: [newSecret()] } }, 'standardWebhooks.secret'],
    ['no Standard Webhooks secret', { webhooks: [{ url }], standardWebhooks: { secrets: [] } }, 'standardWebhooks.secrets'],
    ['a secret without whsec_', { webhooks: [{ url }], standardWebhooks: { secrets: [newSecret().slice(6)] } }, 'standardWebhooks.secrets[0]'],
    ['a secret that is not base64', { webhooks: [{ url }], standardWebhooks: { secrets: [newSecret(), 'whsec_not base64!'] } }, 'standardWebhooks.secrets[1]'],
    ['a secret of 16 bytes', { webhooks: [{ url }], standardWebhooks: { secrets: [newSecret(16)] } }, 'standardWebhooks.secrets[0]'],
    ['a secret of 65 bytes', { webhooks: [{ url }], standardWebhooks: { secrets: [newSecret(65)] } }, 'standardWebhooks.secrets[0]'],
    ['a Standard Webhooks header', { webhooks: [{ url, headers: { 'Webhook-Signature': 'v1,forged' } }] }, 'webhooks[0].headers.Webhook-Signature'],
    ['a rate limit of 0', { webhooks: [{ url }, { url, rateLimit: 0 }] }, 'webhooks[1].rateLimit'],
    ['a rate limit that is a fraction', { webhooks: [{ url, rateLimit: 2.5 }] }, 'webhooks[0].rateLimit'],
    ['a rate limit that is a string', { webhooks: [{ url, rateLimit: '50' }] }, 'webhooks[0].rateLimit'],
    ['a misspelt key in an entry', { webhooks: [{ url, ratelimit: 50 }] }, 'webhooks[0].ratelimit'],
  ])('refuses %s with a ConfigError naming the entry', (_label, settings, option) => {
    const error = configError(settings);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toBeInstanceOf(AnalyticsError);
    expect(error.code).toBe('ERR_CONFIG');
    expect(error.option).toBe(option);
    expect(error.message).toContain(`\`${option}\``);
  });

  it('accepts a list of shared secrets, Standard Webhooks secrets of 24 to 64 bytes, and a rate limit per URL', async () => {
    const standardWebhooks = { secrets: [newSecret(24), newSecret(64), newSecret()] };
    await new WebhookDestination({ webhooks: [{ url, rateLimit: 1 }, { url, rateLimit: 50 }], sharedSecret: ['new', 'old'], standardWebhooks }).close();
  });

  it('never shows a secret in an error message', () => {
    const secret = newSecret(16);
    expect(configError({ webhooks: [{ url }], standardWebhooks: { secrets: [secret] } }).message).not.toContain(secret.slice(6));
    expect(configError({ webhooks: [{ url }], sharedSecret: ['s3cret-value', 's3cret-value'] }).message).not.toContain('s3cret-value');
  });

  it('says what was wrong with the value', () => {
    expect(configError({ webhooks: [{ url: 'ftp://hooks.test/x' }] }).message).toBe(
      'Expected `webhooks[0].url` to be an absolute http or https URL, got `"ftp://hooks.test/x"` (string)',
    );
    expect(configError({ webhooks: [] }).message).toBe('Expected `webhooks` to be an array of 1 to 5 entries, got 0 entries');
  });

  it.each(['http://user:pass@hooks.test/x', 'https://token@hooks.test/x', 'https://:pass@hooks.test/x'])(
    'refuses credentials in a URL (%s), which would be dropped, and says where they go instead',
    (withCredentials) => {
      const error = configError({ webhooks: [{ url }, { url: withCredentials }] });
      expect(error).toMatchObject({ name: 'ConfigError', option: 'webhooks[1].url' });
      expect(error.message).toBe(
        'Expected `webhooks[1].url` to have no user name or password (they would not be sent); put an `Authorization` header in its `headers` instead',
      );
      expect(error.message).not.toContain(withCredentials);
    },
  );

  it.each([
    [{ timeout: 0 }, 'timeout'],
    [{ retryWindow: -1 }, 'retryWindow'],
    [{ minRetryDelay: 1.5 }, 'minRetryDelay'],
    [{ minRetryDelay: 500, maxRetryDelay: 100 }, 'maxRetryDelay'],
    [{ fetch: 'fetch' as never }, 'fetch'],
    [{ maxRequestsPerUrl: 0 }, 'maxRequestsPerUrl'],
    [{ breakerThreshold: 0.5 }, 'breakerThreshold'],
  ])('refuses the option %o', (options, option) => {
    expect(configError({ webhooks: [{ url }] }, options).option).toBe(option);
  });

  it.each([
    [{ timeout: 2 ** 31 }, 'timeout', 1],
    [{ minRetryDelay: 2 ** 31 }, 'minRetryDelay', 0],
    [{ maxRetryDelay: 2 ** 31 }, 'maxRetryDelay', 1_000],
  ])('refuses %o, a wait longer than a timer can hold, naming %s and the maximum', (options, option, min) => {
    const error = configError({ webhooks: [{ url }] }, options);
    expect(error).toMatchObject({ name: 'ConfigError', option });
    expect(error.message).toBe(`Expected \`${option}\` to be an integer >= ${min} and <= 2147483647, got \`2147483648\` (number)`);
  });

  it('takes a retryWindow beyond the longest timer: no timer waits that long', async () => {
    const destination = new WebhookDestination({ webhooks: [{ url }] }, { retryWindow: 30 * 24 * 3_600_000, maxRetryDelay: 2 ** 31 - 1 });
    await destination.close();
  });

  it('refuses a dispatcher without the methods it sends with, naming it', () => {
    const error = configError({ webhooks: [{ url }] }, { dispatcher: {} as never });
    expect(error).toMatchObject({ name: 'ConfigError', option: 'dispatcher' });
    expect(error.message).toBe('Expected `dispatcher` to be an undici Dispatcher, with request and dispatch methods, got an instance of Object without request, dispatch');
  });
});
