import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { server } from './endpoint.js';

/** Starts msw for the calling test file; any request nobody mocked fails the test. */
export function useMockServer(): void {
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => {
    server.resetHandlers();
    vi.useRealTimers();
  });
  afterAll(() => server.close());
}
