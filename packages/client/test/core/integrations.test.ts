import { expect, it } from 'vitest';
import { isDestinationEnabled } from '../../src/index.js';

it.each([
  [undefined, true],
  [{}, true],
  [{ All: false }, false],
  [{ All: false, Webhooks: true }, true],
  [{ All: true, Webhooks: false }, false],
  [{ Webhooks: false }, false],
  [{ All: false, webhooks: true }, false],
  [{ All: false, Webhooks: { url: 'x' } }, true],
])('isDestinationEnabled(%o, "Webhooks") is %s', (integrations, expected) => {
  expect(isDestinationEnabled(integrations as never, 'Webhooks')).toBe(expected);
});
