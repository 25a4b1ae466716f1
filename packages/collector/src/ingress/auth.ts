import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { isPlainObject } from 'batched-analytics/internal';
import type { CollectorConfig, SourceConfig } from '../config/config.js';
import { RequestError } from './http.js';
import { digest, type Role, sameDigest, SessionCookies } from './session.js';

/**
 * A 401 with the challenge it answers in `WWW-Authenticate`. Only the write-key routes ask for
 * `Basic`: a browser answers that with its own login dialog, which would hold the live page's
 * `fetch` calls behind it; the page and the admin routes ask for `Bearer`, which no browser prompts for.
 */
export class Unauthorized extends RequestError {
  readonly challenge: string;

  constructor(scheme: 'Basic' | 'Bearer', message: string) {
    super(401, 'ERR_UNAUTHORIZED', message);
    this.challenge = `${scheme} realm="batched-analytics"${scheme === 'Basic' ? ', charset="UTF-8"' : ''}`;
  }
}

/** The sources by write key, compared in constant time. */
export class WriteKeys {
  readonly #sources: readonly { key: Buffer; source: SourceConfig }[];

  constructor(sources: readonly SourceConfig[]) {
    this.#sources = sources.map((source) => ({ key: digest(source.writeKey), source }));
  }

  /**
   * The source whose write key the request sends as its basic-auth user (the password is ignored,
   * as the client sends none).
   * @throws {Unauthorized} when the header is missing, malformed or names no source.
   */
  sourceOf(headers: IncomingHttpHeaders): SourceConfig {
    const match = /^basic\s+([a-z0-9+/=._-]+)\s*$/i.exec(headers.authorization ?? '');
    const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : undefined;
    const found = decoded === undefined ? undefined : this.find(decoded.split(':', 1)[0]!);
    if (found !== undefined) return found;
    const why = headers.authorization === undefined ? 'no Authorization header' : 'an unknown write key';
    throw new Unauthorized('Basic', `Expected a source's write key as the basic-auth user, got ${why}`);
  }

  /**
   * The source of a request that sends its write key in the body (analytics.js's batches do): the
   * basic-auth user when there is an `Authorization` header (checked before the body is read),
   * else the body's `writeKey`.
   * @throws {Unauthorized} when neither names a source.
   */
  sourceOfBody(body: unknown): SourceConfig {
    const key = isPlainObject(body) ? body.writeKey : undefined;
    const found = typeof key === 'string' ? this.find(key) : undefined;
    if (found !== undefined) return found;
    const why = key === undefined ? 'no Authorization header and no `writeKey` in the body' : 'an unknown `writeKey` in the body';
    throw new Unauthorized('Basic', `Expected a source's write key as the basic-auth user or as \`writeKey\` in the body, got ${why}`);
  }

  /** The source of a write key; undefined for none. Every key is compared, found or not: the time taken says nothing of which one matched. */
  find(writeKey: string): SourceConfig | undefined {
    const given = digest(writeKey);
    let found: SourceConfig | undefined;
    for (const { key, source } of this.#sources) if (sameDigest(given, key)) found = source;
    return found;
  }
}

/** Headers a reverse proxy adds: a request that carries one did not come from this host, whatever its socket says. */
const RELAYED = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/**
 * Who may read the messages (the live page, its stream, `/history`, `/events/<id>`, `/metrics`)
 * and who may change state (replays, deletions). Credentials: `Authorization: Bearer <token>` with
 * the config's `adminToken` or `readToken`, or the session cookie the page's sign-in sets. Reading
 * needs none on a collector listening on loopback, for a request no proxy relayed: whoever can reach
 * that address can read the data dir too. Replays and deletions always need the admin token.
 */
export class Access {
  readonly #tokens: readonly { role: Role; token: Buffer }[];
  readonly #cookies: SessionCookies;
  readonly #hasAdmin: boolean;
  #loopback = false;

  constructor(config: Pick<CollectorConfig, 'adminToken' | 'readToken' | 'server'>) {
    const tokens = new Map<Role, string>();
    if (config.adminToken !== undefined) tokens.set('admin', config.adminToken);
    if (config.readToken !== undefined) tokens.set('reader', config.readToken);
    this.#tokens = [...tokens].map(([role, token]) => ({ role, token: digest(token) }));
    this.#cookies = new SessionCookies(tokens, config.server.sessionLifetime);
    this.#hasAdmin = config.adminToken !== undefined;
  }

  /** Whether any token is configured: without one the collector may listen on loopback only. */
  get configured(): boolean {
    return this.#tokens.length > 0;
  }

  /** Learns the address the server listens on: on loopback, reading needs no credentials. */
  listening(address: string): void {
    this.#loopback = isLoopback(address);
  }

  /**
   * Lets the request read messages, or refuses it. The function `/metrics` and any other route
   * that shows data guards itself with.
   * @throws {Unauthorized} without valid credentials, where they are needed.
   */
  requireReader(req: IncomingMessage): void {
    if (this.#roleOf(req) !== undefined || this.#openToReaders(req)) return;
    throw new Unauthorized('Bearer', this.configured ? 'Expected `Authorization: Bearer <token>` (the config\'s adminToken or readToken), or a browser signed in on the live page' : NO_TOKEN);
  }

  /**
   * When what lets the request read ends, for what stays open (the live page's stream): its
   * session's expiry when it has no token (undefined: nothing ends it but a change of tokens).
   */
  readerUntil(req: IncomingMessage): number | undefined {
    return req.headers.authorization === undefined ? this.#cookies.expiresOf(req.headers.cookie) : undefined;
  }

  /**
   * Lets the request send deliveries again or ask for deletions, or refuses it.
   * @param what what the request asks for, for the message.
   * @throws {RequestError} 403 when the config has no `adminToken`, the credentials are the read
   * token's, or a signed-in browser sends it from a page of another origin; {@link Unauthorized}
   * without credentials.
   */
  requireAdmin(req: IncomingMessage, what: string): void {
    if (!this.#hasAdmin) throw new RequestError(403, 'ERR_FORBIDDEN', `${what} is off: the config has no \`adminToken\``);
    // Without a token the credentials can only be the session cookie, which a browser also sends
    // from a page of another port of this host or a sibling subdomain: SameSite counts them the
    // same site. A token cannot come from another page without a preflight, which these routes refuse.
    if (req.headers.authorization === undefined && fromAnotherOrigin(req)) {
      throw new RequestError(403, 'ERR_FORBIDDEN', `${what} from a page of another origin is refused: a signed-in browser asks for it from the live page only`);
    }
    const role = this.#roleOf(req);
    if (role === 'admin') return;
    if (role === 'reader') throw new RequestError(403, 'ERR_FORBIDDEN', `${what} needs the \`adminToken\`: the read token only reads`);
    throw new Unauthorized('Bearer', `${what} needs \`Authorization: Bearer <adminToken>\`, or a browser signed in with the \`adminToken\``);
  }

  /**
   * Signs a browser in: the `Set-Cookie` header of a session for the token's role, or undefined
   * when the token is none of the config's.
   */
  signIn(token: string, req: IncomingMessage): string | undefined {
    const role = this.#roleOfToken(token);
    return role === undefined ? undefined : this.#cookies.issue(role, overHttps(req));
  }

  /** Whether the page must ask a browser to sign in: it needs credentials, has none, and there is a token to sign in with. */
  mustSignIn(req: IncomingMessage): boolean {
    return this.configured && this.#roleOf(req) === undefined && !this.#openToReaders(req);
  }

  #openToReaders(req: IncomingMessage): boolean {
    return this.#loopback && !RELAYED.some((name) => req.headers[name] !== undefined);
  }

  #roleOf(req: IncomingMessage): Role | undefined {
    const bearer = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (bearer) return this.#roleOfToken(bearer[1]!);
    return this.#cookies.verify(req.headers.cookie);
  }

  #roleOfToken(token: string): Role | undefined {
    const given = digest(token);
    let role: Role | undefined;
    for (const entry of this.#tokens) if (sameDigest(given, entry.token)) role = entry.role;
    return role;
  }
}

/** Whether a browser sent the request from a page of another origin than the collector's own. */
function fromAnotherOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  // What the browser itself says, behind a proxy that rewrites Host too.
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  // No Origin: not a browser's form or fetch (browsers send one with every POST).
  if (origin === undefined) return false;
  return URL.parse(origin)?.host !== req.headers.host;
}

const NO_TOKEN = 'This collector shows its messages only to requests from its own host: a request a proxy relayed needs a token, and the config has none (add `readToken` or `adminToken`)';

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6. */
export function isLoopback(address: string): boolean {
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}

/**
 * Whether the browser reached the collector over HTTPS: a TLS socket, or a proxy that says so in
 * `X-Forwarded-Proto`. Believing that header from anyone is safe here: it only adds `Secure` to the
 * cookie of whoever sends it.
 */
function overHttps(req: IncomingMessage): boolean {
  if ((req.socket as TLSSocket).encrypted === true) return true;
  const proto = req.headers['x-forwarded-proto'];
  return (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase() === 'https';
}
