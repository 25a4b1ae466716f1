// Per-URL filters: which messages each receiver gets, validated up front.
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  type Message,
  prepareWebhook,
  WebhookDestination,
  type WebhookDestinationOptions,
  type WebhookSettings,
} from '../../src/webhooks/index.js';
import { record } from '../../../../test/helpers/events.js';
import { type Receiver, startReceiver } from '../../../../test/helpers/receiver.js';

const base = { timestamp: '2024-03-01T12:30:00.123Z', context: {}, userId: 'u1' };
const order: Message = { ...base, type: 'track', messageId: 'order', event: 'Order Completed', properties: { total: 9 } };
const signUp: Message = { ...base, type: 'track', messageId: 'signup', event: 'Signed Up' };
const identify: Message = { ...base, type: 'identify', messageId: 'identify', traits: { plan: 'pro' } };
const page: Message = { ...base, type: 'page', messageId: 'page', name: 'Home' };

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const closing of open.splice(0)) await closing.close();
});

async function receivers(count: number): Promise<Receiver[]> {
  const started = await Promise.all(Array.from({ length: count }, () => startReceiver()));
  open.push(...started);
  return started;
}

function destination(settings: WebhookSettings, options: WebhookDestinationOptions = {}): WebhookDestination {
  const made = new WebhookDestination(settings, { minRetryDelay: 1, maxRetryDelay: 5, ...options });
  open.unshift(made);
  return made;
}

/** The messageIds a receiver got, in order. */
function got(receiver: Receiver): string[] {
  return receiver.requests.map((request) => (JSON.parse(request.raw.toString()) as { messageId: string }).messageId);
}

describe('WebhookDestination with a filter per URL', () => {
  it('sends each message only to the URLs whose filter takes it: by track event, and by type', async () => {
    const [orders, identities] = await receivers(2);
    const dest = destination({
      webhooks: [
        { url: orders!.url, filter: { events: ['Order Completed'] } },
        { url: identities!.url, filter: { types: ['identify'] } },
      ],
    });
    const results = [];
    for (const message of [order, signUp, identify, page]) results.push(await dest.deliver(message));
    expect(got(orders!)).toEqual(['order']);
    expect(got(identities!)).toEqual(['identify']);
    expect(results.map(({ delivered, filtered }) => ({ delivered, filtered }))).toEqual([
      { delivered: true, filtered: undefined },
      { delivered: false, filtered: true },
      { delivered: true, filtered: undefined },
      { delivered: false, filtered: true },
    ]);
  });

  it('settles a message no URL takes at once: no request, no attempt, no failure', async () => {
    const [hook] = await receivers(1);
    const dest = destination({ webhooks: [{ url: hook!.url, filter: { types: ['track'], events: ['Order Completed'] } }] });
    const failed = record(dest, 'failed');
    const attempts = record(dest, 'attempt');
    await expect(dest.deliver(signUp)).resolves.toEqual({ delivered: false, attempts: 0, filtered: true });
    await expect(dest.attemptOnce(prepareWebhook(identify), { attempt: 1 })).resolves.toEqual({ outcome: 'filtered' });
    expect(hook!.requests).toHaveLength(0);
    expect(failed).toEqual([]);
    expect(attempts).toEqual([]);
  });

  it('takes the listed types whatever their content, and of tracks only the listed events, when both are given', async () => {
    const [hook, all] = await receivers(2);
    const dest = destination({ webhooks: [{ url: hook!.url, filter: { types: ['track', 'page'], events: ['Order Completed'] } }, { url: all!.url }] });
    for (const message of [order, signUp, identify, page]) await dest.deliver(message);
    expect(got(hook!)).toEqual(['order', 'page']);
    expect(got(all!)).toEqual(['order', 'signup', 'identify', 'page']);
  });

  it('retries only the URLs that take the message, and settles it delivered once one of them answers', async () => {
    let failures = 2;
    const down = await startReceiver((_request, res) => res.writeHead(failures-- > 0 ? 503 : 200).end());
    open.push(down);
    const [other] = await receivers(1);
    const dest = destination({ webhooks: [{ url: down.url, filter: { types: ['identify'] } }, { url: other!.url, filter: { types: ['page'] } }] });
    await expect(dest.deliver(identify)).resolves.toEqual({ delivered: true, attempts: 3 });
    expect(down.requests).toHaveLength(3);
    expect(other!.requests).toHaveLength(0);
  });

  it('lets attemptOnce be told its targets as a previous attempt left them', async () => {
    const [first, second] = await receivers(2);
    const dest = destination({ webhooks: [{ url: first!.url, filter: { types: ['identify'] } }, { url: second!.url }] });
    await expect(dest.attemptOnce(prepareWebhook(identify), { attempt: 2, targets: [1] })).resolves.toEqual({ outcome: 'delivered' });
    expect(first!.requests).toHaveLength(0);
    expect(got(second!)).toEqual(['identify']);
  });
});

describe('WebhookDestination filter settings', () => {
  const url = 'https://hooks.test/a';
  it.each([
    ['a filter that is a list', [url], 'webhooks[0].filter'],
    ['an empty filter', {}, 'webhooks[0].filter'],
    ['an unknown key', { type: ['track'] }, 'webhooks[0].filter.type'],
    ['types that is a string', { types: 'track' }, 'webhooks[0].filter.types'],
    ['an empty list of types', { types: [] }, 'webhooks[0].filter.types'],
    ['an unknown type', { types: ['track', 'Identify'] }, 'webhooks[0].filter.types[1]'],
    ['a type that is not a string', { types: [1] }, 'webhooks[0].filter.types[0]'],
    ['an empty list of events', { events: [] }, 'webhooks[0].filter.events'],
    ['an event that is not a string', { events: ['Order Completed', null] }, 'webhooks[0].filter.events[1]'],
    ['an empty event', { events: [''] }, 'webhooks[0].filter.events[0]'],
    ['events with types that leave out track', { types: ['identify'], events: ['Order Completed'] }, 'webhooks[0].filter.events'],
  ])('refuses %s with a ConfigError naming it', (_label, filter, option) => {
    let error: unknown;
    try {
      new WebhookDestination({ webhooks: [{ url, filter } as never] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).option).toBe(option);
    expect((error as ConfigError).message).toContain(`\`${option}\``);
  });

  it('suggests the key a misspelt one was meant to be', () => {
    expect(() => new WebhookDestination({ webhooks: [{ url, filter: { event: ['x'] } as never }] })).toThrow(/did you mean `events`/);
  });
});
