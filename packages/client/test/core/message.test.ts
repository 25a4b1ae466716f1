import { describe, expect, it } from 'vitest';
import { Analytics, AnalyticsError, MessageTooLargeError, ValidationError, validateMessage } from '../../src/index.js';
import { buildMessage, isoOf, jsonOf, type MessageType, prepareMessage, type SerializedMessage, serializeMessage } from '../../src/core/message.js';
import { MessageStore } from '../../src/client/batch.js';

const defaults = { context: {}, integrations: {} };
type Build = (type: MessageType, params: unknown) => SerializedMessage;
// The two ways a call becomes JSON: in two steps (with beforeSend hooks between them), and in one.
const BUILDERS: [string, Build][] = [
  ['prepareMessage, then serializeMessage', (type, params) => serializeMessage(prepareMessage(type, params as never, defaults))],
  ['buildMessage', (type, params) => buildMessage(type, params as never, defaults)],
];
const build: Build = BUILDERS[0]![1];

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toBeInstanceOf(AnalyticsError);
    return (error as ValidationError).field;
  }
  return undefined;
}

describe.each(BUILDERS)('validation: %s', (_, build) => {
  it.each([
    ['identify', { traits: {} }, 'userId'],
    ['track', { userId: 'u' }, 'event'],
    ['track', { userId: 'u', event: '' }, 'event'],
    ['group', { userId: 'u' }, 'groupId'],
    ['alias', { previousId: 'p' }, 'userId'],
    ['alias', { userId: 'u' }, 'previousId'],
    ['alias', { anonymousId: 'a', previousId: 'p' }, 'userId'],
    ['page', { userId: 7 }, 'userId'],
    ['track', { userId: 'u', event: 'e', properties: [] }, 'properties'],
    ['identify', { userId: 'u', traits: 'pro' }, 'traits'],
    ['page', { userId: 'u', context: new Map() }, 'context'],
    ['track', { userId: 'u', event: 'e', integrations: { Webhooks: 'yes' } }, 'integrations.Webhooks'],
    ['track', { userId: 'u', event: 'e', timestamp: 'yesterday-ish' }, 'timestamp'],
    ['track', { userId: 'u', event: 'e', timestamp: new Date(Number.NaN) }, 'timestamp'],
    ['track', { userId: 'u', event: 'e', messageId: '' }, 'messageId'],
    ['track', { userId: 'u', event: 'e', messageId: 'm'.repeat(101) }, 'messageId'],
    ['page', { userId: 'u', name: 42 }, 'name'],
    ['screen', { userId: 'u', category: '' }, 'category'],
    ['track', { anonymousId: '', event: 'e' }, 'anonymousId'],
    ['page', { userId: 'u', name: 1, category: 2, properties: [] }, 'name'],
    ['track', { userId: 'u', event: 'e', properties: { n: 10n } }, 'properties'],
    ['screen', null, 'params'],
  ] as const)('%s %o is refused naming %s', (type, params, field) => {
    expect(fieldOf(() => build(type, params))).toBe(field);
  });

  it('takes a messageId of up to 100 characters, and says what it expected of a longer one', () => {
    const longest = 'm'.repeat(100);
    expect(build('track', { userId: 'u', event: 'e', messageId: longest }).message.messageId).toBe(longest);
    expect(() => build('track', { userId: 'u', event: 'e', messageId: 'm'.repeat(20_000) })).toThrow(
      'Expected `messageId` to be at most 100 characters, got 20000',
    );
  });

  it('accepts an anonymousId instead of a userId', () => {
    expect(build('track', { anonymousId: 'a', event: 'e' }).message).toMatchObject({ anonymousId: 'a' });
  });

  it('explains what it expected and what it got', () => {
    expect(() => build('track', { userId: 'u', event: 'e', properties: [] })).toThrow(
      'Expected `properties` to be a plain object, got an array',
    );
    expect(() => build('identify', {})).toThrow('Expected `userId` or `anonymousId` on an identify call, got neither');
  });
});

describe.each(BUILDERS)('size: %s', (_, build) => {
  it('measures UTF-8 bytes and refuses a message over 32,000 bytes', () => {
    // A generated messageId and timestamp have the same length in every message.
    const base = build('track', { userId: 'u', event: 'e', properties: { s: '' } });
    const room = 32_000 - base.bytes;
    const largest = build('track', { userId: 'u', event: 'e', properties: { s: 'x'.repeat(room) } });
    expect(largest.bytes).toBe(32_000);
    expect(Buffer.byteLength(jsonOf(largest))).toBe(32_000);
    expect(() => build('track', { userId: 'u', event: 'e', properties: { s: 'x'.repeat(room + 1) } })).toThrow(MessageTooLargeError);

    // 'é' is one UTF-16 unit but two UTF-8 bytes: the limit is in bytes.
    const error = (() => {
      try {
        build('track', { userId: 'u', event: 'e', properties: { s: 'é'.repeat(16_000) } });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(MessageTooLargeError);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ name: 'MessageTooLargeError', code: 'ERR_MESSAGE_TOO_LARGE', limit: 32_000 });
    expect((error as MessageTooLargeError).size).toBeGreaterThan(32_000);
  });

  it('serialises once: the JSON is the message', () => {
    const built = build('track', { userId: 'u', event: 'é' });
    expect(JSON.parse(jsonOf(built))).toEqual(built.message);
    expect(built.bytes).toBe(Buffer.byteLength(jsonOf(built)));
  });
});

describe('buildMessage', () => {
  const read = (built: SerializedMessage): string => {
    const store = new MessageStore();
    store.add(built.json, built.bytes, built.rest);
    const bytes = Buffer.alloc(built.bytes);
    store.copyNext(built.bytes, bytes, 0);
    return bytes.toString();
  };

  /** Builds the call both ways and compares them key for key, in order (the generated id and time aside). */
  const expectTheTwoStepsJson = (type: MessageType, params: unknown, given = defaults): void => {
    const built = buildMessage(type, params as never, given);
    const stepped = serializeMessage(prepareMessage(type, params as never, given));
    const json = jsonOf(built);
    const sameIdAndTime = stepped.json.replace(stepped.message.messageId, built.message.messageId).replace(stepped.message.timestamp, built.message.timestamp);
    expect(Object.entries(JSON.parse(json))).toEqual(Object.entries(JSON.parse(sameIdAndTime)));
    expect(JSON.parse(json)).toEqual(built.message);
    expect(built.bytes).toBe(Buffer.byteLength(json));
    // The message store writes the JSON, in one part or two, byte for byte.
    expect(read(built)).toBe(json);
  };

  it.each([
    ['identify', { userId: 'u', traits: { name: 'Zoë 東京 🎉' } }],
    ['track', { anonymousId: 'a', event: 'naïve – 東京', properties: { n: 1, nested: { list: [1, 'é'] } } }],
    ['page', { userId: 'u', name: 'Home', category: 'Docs', properties: { path: '/' } }],
    ['screen', { userId: 'u', name: 'Main' }],
    ['group', { userId: 'u', groupId: 'g', traits: {} }],
    ['alias', { userId: 'u', previousId: 'p' }],
  ] as const)('gives %s the JSON the two steps give', (type, params) => {
    expectTheTwoStepsJson(type, params);
  });

  it.each([
    ['its own messageId', { messageId: 'm-1' }],
    ['its own timestamp', { timestamp: '2025-01-02T03:04:05.678Z' }],
    ['a context', { context: { ip: '10.0.0.1' } }],
    ['integrations', { integrations: { All: false, Webhooks: true } }],
    ['a type field', { type: 'identify' }],
  ])('gives a call with %s the JSON the two steps give', (_, extra) => {
    expectTheTwoStepsJson('track', { userId: 'u', event: 'e', ...extra });
  });

  it('merges the client’s default context and integrations as the two steps do', () => {
    expectTheTwoStepsJson('track', { userId: 'u', event: 'e' }, { context: { app: { name: 'shop' } }, integrations: { All: true } });
  });
});

describe('timestamp strings', () => {
  const at = (timestamp: unknown) => build('track', { userId: 'u', event: 'e', timestamp }).message.timestamp;

  it.each([
    ['2026-01-31T12:34:56.789Z', '2026-01-31T12:34:56.789Z'],
    ['2026-01-31T12:34:56Z', '2026-01-31T12:34:56.000Z'],
    ['2026-01-31t12:34:56z', '2026-01-31T12:34:56.000Z'],
    ['2026-01-31 12:34:56Z', '2026-01-31T12:34:56.000Z'],
    ['2026-01-31T12:34Z', '2026-01-31T12:34:00.000Z'],
    ['2026-01-31T12:34:56.7+01:00', '2026-01-31T11:34:56.700Z'],
    ['2026-01-31T12:34:56.123456789-05:30', '2026-01-31T18:04:56.123Z'],
    ['2026-01-01T00:30:00+01:00', '2025-12-31T23:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
    ['2026-01-31', '2026-01-31T00:00:00.000Z'],
    // Without an offset, as Python's isoformat() writes a naive datetime: UTC, never the reader's zone.
    ['2026-01-31T12:34:56', '2026-01-31T12:34:56.000Z'],
    ['2026-01-31T12:34:56.5', '2026-01-31T12:34:56.500Z'],
    ['2026-01-31T12:34', '2026-01-31T12:34:00.000Z'],
    // The basic forms of an offset, as strftime's %z writes it.
    ['2026-01-31T12:34:56+0100', '2026-01-31T11:34:56.000Z'],
    ['2026-01-31T12:34:56-05', '2026-01-31T17:34:56.000Z'],
    // What Date#toISOString gives for the years beyond 9999 and before 0.
    ['+275760-09-13T00:00:00.000Z', '+275760-09-13T00:00:00.000Z'],
    ['-000001-01-01T00:00:00.000Z', '-000001-01-01T00:00:00.000Z'],
  ])('reads %s as %s', (given, iso) => {
    expect(at(given)).toBe(iso);
  });

  it('reads a date without a time as UTC midnight, and a time without an offset as UTC, whatever the time zone', () => {
    const tz = process.env.TZ;
    process.env.TZ = 'Asia/Tokyo';
    try {
      expect(at('2026-01-01')).toBe('2026-01-01T00:00:00.000Z');
      expect(at('2026-01-01T10:00:00')).toBe('2026-01-01T10:00:00.000Z');
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it.each([
    '1',
    'foo 2',
    '2026',
    '2026-01',
    '2026-02-31T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-01-00T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T10:60:00Z',
    '2026-01-01T10:00:60Z',
    '2026-01-01T10:00:00.Z',
    '2026-01-01T10:00:00+010',
    '2026-01-01T10:00:00+01:0',
    '2026-01-01T10:00:00+24:00',
    '2026-01-01T10:00:00+01:60',
    '2026-01-01T10:00:00Z ',
    ' 2026-01-01T10:00:00Z',
    '2026-1-01T10:00:00Z',
    '2026-01-01T1:00:00Z',
    'Thu, 01 Jan 2026 10:00:00 GMT',
    '01/02/2026',
    '-000000-01-01T00:00:00Z',
    '+275760-09-13T00:00:00.001Z',
    '',
  ])('refuses %j naming timestamp', (timestamp) => {
    expect(fieldOf(() => at(timestamp))).toBe('timestamp');
  });

  it('says what a date string must be', () => {
    expect(() => at('2026-02-31T00:00:00Z')).toThrow(/ISO 8601/);
  });

  it('accepts a Date, and refuses one that holds no time', () => {
    expect(at(new Date('2026-01-31T12:34:56.789Z'))).toBe('2026-01-31T12:34:56.789Z');
    expect(fieldOf(() => at(new Date(Number.NaN)))).toBe('timestamp');
  });
});

describe('validateMessage (incoming messages)', () => {
  it('keeps the sender id, timestamp and context and adds no library', () => {
    const message = validateMessage({ type: 'track', userId: 'u', event: 'e', messageId: 'm', timestamp: '2024-01-01T00:00:00Z', context: { ip: '1.2.3.4' } });
    expect(message).toEqual({ type: 'track', userId: 'u', event: 'e', messageId: 'm', timestamp: '2024-01-01T00:00:00.000Z', context: { ip: '1.2.3.4' } });
  });

  it('keeps a "__proto__" key of parsed JSON as a plain field, never as the prototype', () => {
    const message = validateMessage(JSON.parse('{"type":"track","userId":"u","event":"e","__proto__":{"polluted":true}}'));
    expect(Object.getPrototypeOf(message)).toBe(Object.prototype);
    expect((message as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(message, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('names the type when it is unknown', () => {
    expect(fieldOf(() => validateMessage({ type: 'delete', userId: 'u' }))).toBe('type');
    expect(fieldOf(() => validateMessage('track'))).toBe('message');
  });
});

describe('hostile call arguments (issue 11)', () => {
  const analytics = new Analytics('write-key', { disable: true });
  const thrower = () => {
    throw new Error('getter blew up');
  };

  it.each([
    ['a toJSON that returns undefined', { userId: 'u', event: 'E', toJSON: () => undefined }, 'toJSON'],
    ['a toJSON that returns a string', { userId: 'u', event: 'E', toJSON: () => 'oops' }, 'toJSON'],
    ['a toJSON inside properties', { userId: 'u', event: 'E', properties: { toJSON: () => 'oops' } }, 'properties'],
    ['a throwing getter at the top level', Object.defineProperty({ userId: 'u' }, 'event', { get: thrower, enumerable: true }), 'event'],
    ['a throwing getter inside context', { userId: 'u', event: 'E', context: Object.defineProperty({}, 'ip', { get: thrower, enumerable: true }) }, 'context'],
    ['a Proxy whose get trap throws', new Proxy({ userId: 'u', event: 'E' }, { get: thrower }), 'userId'],
    ['a Proxy whose ownKeys trap throws', new Proxy({ userId: 'u', event: 'E' }, { ownKeys: thrower }), 'params'],
    ['a Proxy whose getPrototypeOf trap throws', new Proxy({ userId: 'u', event: 'E' }, { getPrototypeOf: thrower }), 'params'],
    ['a Proxy whose ownKeys trap throws inside integrations', { userId: 'u', event: 'E', integrations: new Proxy({}, { ownKeys: thrower }) }, 'integrations'],
    ['a Proxy inside properties', { userId: 'u', event: 'E', properties: new Proxy({}, { getPrototypeOf: thrower }) }, 'properties'],
  ])('%s is a ValidationError naming the field, never a raw error', (_, params, field) => {
    expect(fieldOf(() => analytics.track(params as never))).toBe(field);
  });

  it('keeps the thrown error as the cause', () => {
    const params = Object.defineProperty({ userId: 'u' }, 'event', { get: thrower, enumerable: true });
    expect(() => analytics.track(params as never)).toThrow(expect.objectContaining({ cause: expect.objectContaining({ message: 'getter blew up' }) }));
  });
});

describe('isoOf', () => {
  it('gives each time its own ISO 8601 text, however the times it is asked for alternate', () => {
    const base = Date.UTC(2026, 10, 27, 12, 0, 0);
    // The collector's order: a message's corrected timestamp, then its batch's receivedAt, over and over.
    const asked = [base, base + 40, base, base + 40, base + 1, base + 40, base + 2, base + 1, base + 2, base + 2, base + 40, base];
    expect(asked.map((ms) => isoOf(ms))).toEqual(asked.map((ms) => new Date(ms).toISOString()));
  });

  it('throws for a time beyond the dates a Date holds, and keeps formatting the others', () => {
    const base = Date.UTC(2026, 10, 27);
    expect(isoOf(base)).toBe('2026-11-27T00:00:00.000Z');
    expect(() => isoOf(8.64e15 + 1)).toThrow(RangeError);
    expect(isoOf(base + 1)).toBe('2026-11-27T00:00:00.001Z');
    expect(isoOf(base)).toBe('2026-11-27T00:00:00.000Z');
  });
});
