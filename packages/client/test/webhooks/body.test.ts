import { describe, expect, it } from 'vitest';
import { type Message, toWebhookBody, ValidationError, type WebhookInput } from '../../src/webhooks/index.js';

const timestamp = '2024-03-01T12:30:00.123Z';
const base = { messageId: 'm-1', timestamp, anonymousId: 'anon-1', integrations: { All: true } };

function message(fields: Record<string, unknown>): Message {
  return { ...base, context: {}, ...fields } as Message;
}

describe('toWebhookBody', () => {
  const at = { receivedAt: '2024-03-01T12:30:01.000Z' };

  it('keeps the spec fields of a page in their order, then adds messageId, anonymousId, name, category and receivedAt', () => {
    const body = toWebhookBody(
      message({ type: 'page', userId: 'u1', name: 'Home', category: 'Docs', properties: { path: '/', url: 'https://x.test/', extra: 1 } }),
      at,
    );
    expect(JSON.stringify(body)).toBe(
      `{"version":1,"type":"page","userId":"u1","properties":{"path":"/","url":"https://x.test/","extra":1},"timestamp":"${timestamp}",` +
        '"messageId":"m-1","anonymousId":"anon-1","name":"Home","category":"Docs","receivedAt":"2024-03-01T12:30:01.000Z"}',
    );
  });

  it('keeps the name and the device, os and app context of a screen, then adds its properties', () => {
    const context = { device: { model: 'Pixel 8', type: 'android' }, os: { name: 'Android', version: '14' }, app: { build: '7', name: 'Shop', version: '2.1' } };
    const body = toWebhookBody(message({ type: 'screen', userId: 'u1', name: 'Cart', properties: { a: 1 }, context }));
    expect(body).toStrictEqual({ version: 1, type: 'screen', userId: 'u1', name: 'Cart', timestamp, context, messageId: 'm-1', anonymousId: 'anon-1', properties: { a: 1 } });
    expect(Object.keys(body)).toEqual(['version', 'type', 'userId', 'name', 'timestamp', 'context', 'messageId', 'anonymousId', 'properties']);
  });

  it('carries the traits of an identify, and an empty object when it has none', () => {
    expect(JSON.stringify(toWebhookBody(message({ type: 'identify', userId: 'u1', traits: { plan: 'pro', seats: 3 } }), at))).toBe(
      `{"version":1,"type":"identify","userId":"u1","traits":{"plan":"pro","seats":3},"timestamp":"${timestamp}","messageId":"m-1","anonymousId":"anon-1","receivedAt":"${at.receivedAt}"}`,
    );
    expect(toWebhookBody(message({ type: 'identify', userId: 'u1' }))).toMatchObject({ traits: {} });
  });

  it('carries the event and properties of a track', () => {
    expect(JSON.stringify(toWebhookBody(message({ type: 'track', userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' } }), at))).toBe(
      `{"version":1,"type":"track","userId":"u1","event":"Signed Up","properties":{"plan":"pro"},"timestamp":"${timestamp}","messageId":"m-1","anonymousId":"anon-1","receivedAt":"${at.receivedAt}"}`,
    );
  });

  it('carries the originalTimestamp and sentAt a message has (the collector sets them), before receivedAt; other values are left out', () => {
    const times = { originalTimestamp: '2024-03-01T13:30:00.123Z', sentAt: '2024-03-01T13:30:02.000Z' };
    expect(JSON.stringify(toWebhookBody(message({ type: 'track', userId: 'u1', event: 'Late', ...times }), at))).toBe(
      `{"version":1,"type":"track","userId":"u1","event":"Late","properties":{},"timestamp":"${timestamp}","messageId":"m-1","anonymousId":"anon-1",` +
        `"originalTimestamp":"${times.originalTimestamp}","sentAt":"${times.sentAt}","receivedAt":"${at.receivedAt}"}`,
    );
    expect(toWebhookBody(message({ type: 'alias', userId: 'u2', previousId: 'u1', ...times }))).toMatchObject(times);
    const odd = toWebhookBody(message({ type: 'track', userId: 'u1', event: 'Odd', originalTimestamp: 5, sentAt: null }));
    expect(Object.keys(odd)).not.toContain('originalTimestamp');
    expect(Object.keys(odd)).not.toContain('sentAt');
  });

  it('names the identities of an alias "Previous ID" and "User ID", with no userId, previousId or anonymousId', () => {
    const body = toWebhookBody(message({ type: 'alias', userId: 'new-id', previousId: 'old-id' }), at);
    expect(JSON.stringify(body)).toBe(
      `{"version":1,"type":"alias","Previous ID":"old-id","User ID":"new-id","timestamp":"${timestamp}","messageId":"m-1","receivedAt":"${at.receivedAt}"}`,
    );
  });

  it('carries groupId, userId and traits of a group', () => {
    expect(JSON.stringify(toWebhookBody(message({ type: 'group', userId: 'u1', groupId: 'g1', traits: { name: 'Acme', employees: 40 } }), at))).toBe(
      `{"version":1,"type":"group","userId":"u1","groupId":"g1","traits":{"name":"Acme","employees":40},"timestamp":"${timestamp}","messageId":"m-1","anonymousId":"anon-1","receivedAt":"${at.receivedAt}"}`,
    );
  });

  it('forwards an anonymous-only message with its anonymousId and no userId key', () => {
    const body = toWebhookBody({ type: 'track', anonymousId: 'anon-9', event: 'E', messageId: 'm-9', timestamp, context: {} } as Message);
    expect(JSON.stringify(body)).toBe(`{"version":1,"type":"track","event":"E","properties":{},"timestamp":"${timestamp}","messageId":"m-9","anonymousId":"anon-9"}`);
  });

  it('refuses a receivedAt outside the dates JavaScript can hold with a ValidationError naming it, and formats the next one right', () => {
    const track = message({ type: 'track', userId: 'u1', event: 'Signed Up' });
    for (const receivedAt of [8.64e15 + 1, -8.64e15 - 1, Number.NaN, 'not a date', '1', '2026-02-31T00:00:00Z', '2026-01-01T10:00:00+1']) {
      expect(() => toWebhookBody(track, { receivedAt })).toThrow(expect.objectContaining({ name: 'ValidationError', field: 'receivedAt' }));
    }
    const last = 8.64e15;
    const receivedAt = (at: number) => (toWebhookBody(track, { receivedAt: at }) as { receivedAt?: string }).receivedAt;
    expect(receivedAt(last)).toBe(new Date(last).toISOString());
    expect(() => toWebhookBody(track, { receivedAt: last + 1 })).toThrow(ValidationError);
    expect(receivedAt(last)).toBe('+275760-09-13T00:00:00.000Z');
    expect(receivedAt(0)).toBe('1970-01-01T00:00:00.000Z');
  });

  it('makes a delete exactly type, userId and timestamp, without version, messageId or receivedAt', () => {
    expect(toWebhookBody({ type: 'delete', userId: 'u1', timestamp: new Date(timestamp), messageId: 'd-1' }, at)).toStrictEqual({
      type: 'delete',
      userId: 'u1',
      timestamp,
    });
  });

  it('keeps a non-empty context on every versioned type', () => {
    const context = { ip: '203.0.113.9' };
    expect(toWebhookBody(message({ type: 'track', userId: 'u1', event: 'E', context }))).toMatchObject({ context });
    expect(toWebhookBody(message({ type: 'alias', userId: 'u2', previousId: 'u1', context }))).toMatchObject({ context });
  });

  it('normalises timestamps to ISO 8601 UTC with milliseconds', () => {
    const body = toWebhookBody(message({ type: 'track', userId: 'u1', event: 'E', timestamp: '2024-03-01T14:30:00+02:00' }));
    expect(body.timestamp).toBe('2024-03-01T12:30:00.000Z');
    expect(toWebhookBody({ type: 'delete', userId: 'u1' }).timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('refuses an unknown type, naming the known ones', () => {
    expect(() => toWebhookBody(message({ type: 'purchase', userId: 'u1' }))).toThrow(
      expect.objectContaining({
        name: 'ValidationError',
        field: 'type',
        message: 'Expected `type` to be one of page, screen, identify, track, alias, group, delete, got `"purchase"` (string)',
      }),
    );
  });

  it('refuses a delete without userId, and a message with neither userId nor anonymousId', () => {
    expect(() => toWebhookBody({ type: 'track', event: 'E' } as unknown as WebhookInput)).toThrow(ValidationError);
    expect(() => toWebhookBody({ type: 'delete' } as WebhookInput)).toThrow(expect.objectContaining({ field: 'userId' }));
  });

  it('refuses what the message itself gets wrong', () => {
    expect(() => toWebhookBody(message({ type: 'track', userId: 'u1' }))).toThrow(expect.objectContaining({ field: 'event' }));
    expect(() => toWebhookBody(message({ type: 'group', userId: 'u1' }))).toThrow(expect.objectContaining({ field: 'groupId' }));
    expect(() => toWebhookBody(message({ type: 'alias', userId: 'u1' }))).toThrow(expect.objectContaining({ field: 'previousId' }));
    expect(() => toWebhookBody({ type: 'delete', userId: 'u1', timestamp: 'yesterday' })).toThrow(
      expect.objectContaining({ field: 'timestamp' }),
    );
    expect(() => toWebhookBody(null as unknown as WebhookInput)).toThrow(expect.objectContaining({ field: 'message' }));
  });
});
