import { describe, expect, it } from 'vitest';
import { deriveMessageId } from '../../src/import/message-id.js';

describe('deriveMessageId', () => {
  it('follows the documented recipe (vectors computed with Python hashlib)', () => {
    // sha256("<n>:<text>")[0:16], version nibble 8, variant bits 10, as 8-4-4-4-12 hex.
    expect(deriveMessageId(1, '{"type":"track","userId":"u1","event":"E"}')).toBe('132ccd46-8630-8246-9482-daa0717fca17');
    expect(deriveMessageId(7, '{"event":"Café"}')).toBe('e0594e6c-020a-86ac-9acb-6b9fcac4ab44');
  });

  it('is a version 8 UUID, the same for the same line and different at another position', () => {
    const line = '{"type":"track","userId":"u1","event":"E"}';
    const id = deriveMessageId(3, line);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deriveMessageId(3, line)).toBe(id);
    expect(deriveMessageId(4, line)).not.toBe(id);
    expect(deriveMessageId(3, `${line} `)).not.toBe(id);
  });
});
