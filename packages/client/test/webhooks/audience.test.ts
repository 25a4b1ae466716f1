import { describe, expect, it } from 'vitest';
import { type AudienceState, audienceSync, audienceTrait, type Message, toWebhookBody } from '../../src/webhooks/index.js';

/** userId -> trait value of each message, in order. */
const changes = (messages: Message[], trait = 'power_users') => messages.map((m) => [m.userId, (m.traits as Record<string, boolean>)[trait]]);

describe('audienceTrait', () => {
  it.each([
    ['Power Users', 'power_users'],
    ['power users', 'power_users'],
    ['powerUsers', 'power_users'],
    ['VIPCustomers', 'vip_customers'],
    ['High-Value Customers (EU)', 'high_value_customers_eu'],
    ['  Churn risk: 30 days ', 'churn_risk_30_days'],
    ['already_snake', 'already_snake'],
    ['Cafés Fans', 'cafés_fans'],
  ])('snake_cases %j to %j', (name, trait) => {
    expect(audienceTrait(name)).toBe(trait);
  });

  it('refuses a name with nothing to make a trait of', () => {
    expect(() => audienceTrait(' -- ')).toThrow(expect.objectContaining({ name: 'ValidationError', field: 'audience' }));
  });
});

describe('audienceSync', () => {
  it('sends an identify with the trait true for every member on the first sync', () => {
    const { messages, state } = audienceSync('Power Users', ['u2', 'u1', 'u2']);
    expect(changes(messages)).toEqual([
      ['u2', true],
      ['u1', true],
    ]);
    expect(state).toEqual({ audience: 'Power Users', members: ['u1', 'u2'] });
    expect(messages.every((m) => m.type === 'identify' && m.timestamp === messages[0]!.timestamp)).toBe(true);
    expect(new Set(messages.map((m) => m.messageId)).size).toBe(2);
  });

  it('sends only changes on later syncs: true for who joined, false for who left', () => {
    const first = audienceSync('Power Users', ['u1', 'u2', 'u3']);
    const second = audienceSync('Power Users', new Set(['u2', 'u3', 'u4']), first.state);
    expect(changes(second.messages)).toEqual([
      ['u4', true],
      ['u1', false],
    ]);
    expect(second.state.members).toEqual(['u2', 'u3', 'u4']);

    const third = audienceSync('Power Users', ['u4', 'u3', 'u2'], second.state);
    expect(third.messages).toEqual([]);
  });

  it('returns state that survives a JSON round trip', () => {
    const first = audienceSync('Power Users', ['u1', 'u2']);
    const stored: AudienceState = JSON.parse(JSON.stringify(first.state));
    expect(changes(audienceSync('Power Users', ['u2'], stored).messages)).toEqual([['u1', false]]);
  });

  it('makes messages that become spec identify bodies', () => {
    const [message] = audienceSync('Power Users', ['u1']).messages;
    expect(toWebhookBody(message!)).toStrictEqual({
      version: 1,
      type: 'identify',
      userId: 'u1',
      timestamp: message!.timestamp,
      traits: { power_users: true },
      messageId: message!.messageId,
    });
  });

  it('refuses state of another audience, malformed state and empty ids', () => {
    const { state } = audienceSync('Power Users', ['u1']);
    expect(() => audienceSync('Churn Risk', ['u1'], state)).toThrow(expect.objectContaining({ field: 'previous' }));
    expect(() => audienceSync('Power Users', ['u1'], { audience: 'Power Users' } as AudienceState)).toThrow(
      expect.objectContaining({ field: 'previous' }),
    );
    expect(() => audienceSync('Power Users', ['u1', ''])).toThrow(expect.objectContaining({ field: 'members[1]' }));
    expect(() => audienceSync('Power Users', 'u1')).toThrow(expect.objectContaining({ field: 'members' }));
  });
});
