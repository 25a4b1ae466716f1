import { describe, expect, it } from 'vitest';
import { DeadLetterFile } from '../../src/client/dead-letter.web.js';
import { formatLine } from '../../src/platform/format.web.js';
import { signBody, verifySignature, signPayload } from '../../src/webhooks/signature.web.js';
import { signBody as nodeSignBody } from '../../src/webhooks/signature.js';
import { formatLine as nodeFormat } from '../../src/platform/format.js';

// What the web build (Edge Runtime, Workers without nodejs_compat) does differently from Node's,
// seen from the user's side; bytes.test.ts covers the byte handling, the runtime matrix the rest.
describe('the web build', () => {
  it('formats the library\'s log lines as Node does for the placeholders they use', () => {
    const cases: [string, ...unknown[]][] = [
      ['sending %d messages (%d bytes)', 20, 5_120],
      ['attempt %d of %d messages failed (%s); retrying in %d ms', 1, 3, 'HTTP 503', 250],
      ['100%% done %s', 'now'],
      ['missing %s'],
    ];
    for (const [template, ...args] of cases) expect(formatLine(template, ...args)).toBe(nodeFormat(template, ...args));
    expect(formatLine('state %O', { a: [1, 'x'] })).toBe('state {"a":[1,"x"]}');
  });

  it('signs a delivery through Web Crypto, with the signature node:crypto gives', async () => {
    const payload = new TextEncoder().encode('{"type":"track","event":"Café ☕"}');
    expect(await signPayload(payload, 'shh')).toBe(nodeSignBody(payload, 'shh'));
  });

  it('says which asynchronous form replaces signBody and verifySignature', () => {
    expect(() => signBody('{}', 'shh')).toThrow(expect.objectContaining({ code: 'ERR_UNSUPPORTED_RUNTIME', message: expect.stringContaining('signBodyAsync') }));
    expect(() => verifySignature('{}', 'ab', 'shh')).toThrow(expect.objectContaining({ message: expect.stringContaining('verifySignatureAsync') }));
  });

  it('refuses a dead-letter file at construction, naming the option', () => {
    expect(() => new DeadLetterFile('./undelivered.ndjson', () => undefined)).toThrow(expect.objectContaining({ name: 'ConfigError', option: 'deadLetter' }));
  });
});
