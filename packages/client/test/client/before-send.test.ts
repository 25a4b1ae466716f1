import { describe, expect, it, vi } from 'vitest';
import {
  BeforeSendError,
  ConfigError,
  FilteredError,
  type Message,
  MessageTooLargeError,
  ValidationError,
} from '../../src/index.js';
import { client, recordEvents, track } from '../../../../test/helpers/client.js';
import { mockEndpoint } from '../../../../test/helpers/endpoint.js';
import { useMockServer } from '../../../../test/helpers/msw-lifecycle.js';

useMockServer();

function recordDrops(analytics: ReturnType<typeof client>) {
  return { drops: recordEvents(analytics, 'drop'), errors: recordEvents(analytics, 'error') };
}

describe('beforeSend', () => {
  it('sees the complete wire message and what it returns is sent: enrich and scrub', async () => {
    const received = mockEndpoint();
    const seen: Message[] = [];
    const analytics = client({
      integrations: { Webhooks: true },
      beforeSend: (message) => {
        seen.push(structuredClone(message));
        const { email: _email, ...properties } = message.properties as Record<string, unknown>;
        return { ...message, properties, context: { ...message.context, region: 'eu' } };
      },
    });
    analytics.track({ userId: 'u1', event: 'Signed Up', messageId: 'm-1', properties: { plan: 'pro', email: 'a@b.c' } });
    await analytics.flush();

    expect(seen[0]).toEqual({
      type: 'track',
      userId: 'u1',
      event: 'Signed Up',
      messageId: 'm-1',
      timestamp: expect.stringMatching(/Z$/),
      properties: { plan: 'pro', email: 'a@b.c' },
      context: { library: { name: 'batched-analytics', version: expect.any(String) } },
      integrations: { Webhooks: true },
    });
    expect(received[0]!.body.batch).toEqual([
      { ...seen[0], properties: { plan: 'pro' }, context: { ...seen[0]!.context, region: 'eu' } },
    ]);
    await analytics.close();
  });

  it('runs an array of hooks in order, each on what the previous returned', async () => {
    const received = mockEndpoint();
    const analytics = client({
      beforeSend: [
        (message) => ({ ...message, properties: { steps: ['first'] } }),
        (message) => ({ ...message, properties: { steps: [...(message.properties as { steps: string[] }).steps, 'second'] } }),
      ],
    });
    analytics.track(track(1));
    await analytics.flush();

    expect(received[0]!.body.batch[0]!.properties).toEqual({ steps: ['first', 'second'] });
    await analytics.close();
  });

  it('drops a message a hook returns null for: reported as filtered and counted, never sent', async () => {
    const received = mockEndpoint();
    const hooks = [vi.fn((message: Message) => (message.event === 'Health Check' ? null : message)), vi.fn((m: Message) => m)];
    const analytics = client({ beforeSend: hooks });
    const { drops, errors } = recordDrops(analytics);
    const callback = vi.fn();
    analytics.track({ userId: 'u1', event: 'Health Check' }, callback);
    analytics.track(track(2));

    expect(await analytics.flush()).toEqual({ delivered: 1, failed: 0, dropped: 1 });
    expect(received[0]!.body.batch.map((m) => m.event)).toEqual(['Order Completed']);
    expect(drops).toEqual([{ reason: 'filtered', error: expect.any(FilteredError), message: expect.objectContaining({ event: 'Health Check' }) }]);
    expect(callback.mock.calls[0]![0]).toBeInstanceOf(FilteredError);
    expect(hooks[1]).toHaveBeenCalledTimes(1);
    expect(errors).toEqual([]);
    expect(await analytics.close()).toEqual({ delivered: 1, failed: 0, dropped: 1 });
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('hook bug');
      },
      Error,
    ],
    ['returns nothing', () => undefined, ValidationError],
    ['returns a message without its user', ({ userId: _u, ...rest }: Message) => rest, ValidationError],
    ['returns a promise', async (message: Message) => message, ValidationError],
    ['returns a message over 32,000 bytes', (message: Message) => ({ ...message, properties: { big: 'x'.repeat(40_000) } }), MessageTooLargeError],
  ])('never throws into the caller when a hook %s: the message is dropped and the error reported', async (_, hook, causeClass) => {
    const received = mockEndpoint();
    const analytics = client({ beforeSend: hook as never });
    const { drops, errors } = recordDrops(analytics);
    const callback = vi.fn();

    expect(() => analytics.track(track(1), callback)).not.toThrow();
    expect(await analytics.flush()).toEqual({ delivered: 0, failed: 0, dropped: 1 });
    expect(received).toHaveLength(0);
    expect(drops).toHaveLength(1);
    expect(drops[0]!.reason).toBe('before-send');
    expect(drops[0]!.error).toBeInstanceOf(BeforeSendError);
    expect(drops[0]!.error).toMatchObject({ code: 'ERR_BEFORE_SEND', cause: expect.any(causeClass) });
    expect(errors).toEqual([drops[0]!.error]);
    expect(callback.mock.calls[0]![0]).toBe(drops[0]!.error);
    await analytics.close();
  });

  it('runs only on valid calls: an invalid call still throws at the call, before any hook', async () => {
    const hook = vi.fn((message: Message) => message);
    const analytics = client({ beforeSend: hook });
    expect(() => analytics.track({ userId: 'u1' } as never)).toThrow(ValidationError);
    expect(hook).not.toHaveBeenCalled();
    await analytics.close();
  });

  it.each([
    [{ beforeSend: 'scrub' }, 'beforeSend'],
    [{ beforeSend: [(m: Message) => m, null] }, 'beforeSend[1]'],
  ])('refuses %o naming the option', (options, option) => {
    expect(() => client(options as never)).toThrow(expect.objectContaining({ name: 'ConfigError', option }));
    expect(() => client(options as never)).toThrow(ConfigError);
  });
});
