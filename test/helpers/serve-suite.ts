import { afterAll, afterEach } from 'vitest';
import { stopAll, tempDir } from './collector.js';
import { useThrowawayCluster } from './postgres.js';
import { useReceivers } from './receiver.js';

/** An admin token the suites' configs give the collectors they start. */
export const ADMIN_TOKEN = 'admin-token-0123456789';
/** `Authorization` with {@link ADMIN_TOKEN}. */
export const ADMIN_AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` } as const;

/**
 * What a suite of real `serve` processes needs, with its clean-up registered: a throwaway
 * PostgreSQL cluster (started when first asked for), a temp dir for configs and data dirs, and
 * loopback receivers; every collector started is stopped after each test.
 */
export function useServeSuite() {
  const cluster = useThrowawayCluster();
  const temp = tempDir();
  const receiver = useReceivers();
  afterEach(stopAll);
  afterAll(() => temp.remove());
  return { cluster, temp, receiver };
}
