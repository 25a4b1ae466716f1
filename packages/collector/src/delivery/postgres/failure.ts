import { AnalyticsError } from 'batched-analytics/internal';
import { StoreUnavailableError } from '../store.js';
import type { PostgresTimeouts } from '../../config/postgres-timeouts.js';

/** The timeouts a failure may name, by their config entry. */
type Timeouts = Pick<PostgresTimeouts, 'connectTimeout' | 'queryTimeout'>;

/**
 * SQLSTATE classes (and single codes) that say the database cannot do it now, not that the
 * statement is wrong: connection exceptions, rolled-back transactions (deadlock, serialisation),
 * insufficient resources (disk full, too many connections), operator intervention (a statement
 * timeout, a shutdown, a server starting), system errors; a lock not available, an idle
 * transaction timed out.
 */
const TRANSIENT_CLASSES = ['08', '40', '53', '57', '58'];
const TRANSIENT_CODES = ['55P03', '25P03'];

/** node-postgres's own errors for a connection that broke or timed out, by message, with the timeout each means. */
const DRIVER_ERRORS = new Map<string, keyof Timeouts | undefined>([
  ['timeout expired', 'connectTimeout'],
  ['timeout exceeded when trying to connect', 'connectTimeout'],
  ['Connection terminated due to connection timeout', 'connectTimeout'],
  ['Query read timeout', 'queryTimeout'],
  ['Connection terminated unexpectedly', undefined],
  ['Connection terminated', undefined],
  ['Client has encountered a connection error and is not queryable', undefined],
]);

/** A PostgreSQL server's error (node-postgres's `DatabaseError`), recognised without loading node-postgres. */
function sqlState(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('severity' in error)) return undefined;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? code : undefined;
}

/** Whether `error` says the database cannot be reached or cannot do it now (rather than refusing the statement). */
function isTransient(error: unknown): boolean {
  if (error instanceof AnalyticsError) return false;
  const state = sqlState(error);
  if (state !== undefined) return TRANSIENT_CLASSES.includes(state.slice(0, 2)) || TRANSIENT_CODES.includes(state);
  // A socket's failure (ECONNREFUSED, ECONNRESET, ENOTFOUND…), alone or one per address tried.
  if (error instanceof AggregateError) return error.errors.every(isTransient);
  return error instanceof Error && ('syscall' in error || DRIVER_ERRORS.has(error.message));
}

/** Whether the connection `error` came from is gone or stuck: broken, or a statement on it that never answered. */
export function brokeConnection(error: unknown): boolean {
  return sqlState(error) === undefined && isTransient(error);
}

/**
 * What went wrong, in one line for an operator: a timeout names its config entry, a server's
 * error its SQLSTATE, a socket's its code (an `AggregateError` of sockets has no message of its own).
 */
export function describeFailure(error: unknown, timeouts: Timeouts): string {
  if (!(error instanceof Error)) return String(error);
  const timeout = DRIVER_ERRORS.get(error.message);
  if (timeout !== undefined) return `no answer within ${timeouts[timeout]} ms (postgres.${timeout})`;
  if (error instanceof AggregateError && error.message === '') return error.errors.map((each) => describeFailure(each, timeouts)).join('; ');
  const state = sqlState(error);
  return state === undefined ? error.message : `${error.message} (SQLSTATE ${state})`;
}

/**
 * The error a store call rejects with: a {@link StoreUnavailableError} when the database could not
 * do it now (so the collector answers 503 with `Retry-After`), anything else as it is.
 */
export function unavailableOr(error: unknown, timeouts: Timeouts): unknown {
  if (!isTransient(error)) return error;
  return new StoreUnavailableError(`PostgreSQL: ${describeFailure(error, timeouts)}`, { cause: error });
}
