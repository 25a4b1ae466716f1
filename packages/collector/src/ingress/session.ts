import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Who a token or a session lets in: an admin also replays and deletes; a reader only looks. */
export type Role = 'reader' | 'admin';

/** The cookie a signed-in browser sends back. */
export const SESSION_COOKIE = 'batched_analytics_session';

/** SHA-256 of a secret: compared instead of the secret, so that the comparison's time says nothing of its length. */
export function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** Whether two digests are equal, in constant time. */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}

/**
 * The live page's session cookies: `<role>.<expires>.<mac>`, the MAC an HMAC-SHA256 of role and
 * expiry under a key derived from that role's token. So the cookie is not the token and does not
 * reveal it; every collector with the same config accepts it (collectors behind one load balancer
 * keep no shared session table); changing the token ends every session it opened; and nobody can
 * extend or upgrade one without the token. What it cannot do is end one session alone: a cookie is
 * good until it expires (`server.sessionLifetime`) or its token changes.
 */
export class SessionCookies {
  readonly #keys: Map<Role, Buffer>;
  readonly #lifetime: number;

  /** @param tokens each role's token; a role without one gets no session. */
  constructor(tokens: ReadonlyMap<Role, string>, lifetime: number) {
    this.#keys = new Map([...tokens].map(([role, token]) => [role, digest(`batched-analytics session key\0${token}`)]));
    this.#lifetime = lifetime;
  }

  /**
   * The `Set-Cookie` header of a new session.
   * @param secure whether the browser reached the collector over HTTPS: the cookie then never travels without it.
   */
  issue(role: Role, secure: boolean, now = Date.now()): string {
    const expires = now + this.#lifetime;
    const value = `${role}.${expires}.${this.#mac(role, expires)}`;
    const attributes = [`Path=/`, `Max-Age=${Math.floor(this.#lifetime / 1000)}`, 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])];
    return [`${SESSION_COOKIE}=${value}`, ...attributes].join('; ');
  }

  /** The role of a valid, unexpired session in a `Cookie` header, or undefined. */
  verify(cookieHeader: string | undefined, now = Date.now()): Role | undefined {
    return this.#session(cookieHeader, now)?.role;
  }

  /** When a valid, unexpired session in a `Cookie` header ends (ms since the epoch), or undefined. */
  expiresOf(cookieHeader: string | undefined, now = Date.now()): number | undefined {
    return this.#session(cookieHeader, now)?.expires;
  }

  #session(cookieHeader: string | undefined, now: number): { role: Role; expires: number } | undefined {
    const value = cookieHeader
      ?.split(';')
      .map((pair) => pair.trim())
      .find((pair) => pair.startsWith(`${SESSION_COOKIE}=`))
      ?.slice(SESSION_COOKIE.length + 1);
    const match = /^(reader|admin)\.(\d{1,16})\.([\w-]{43})$/.exec(value ?? '');
    if (!match) return undefined;
    const role = match[1] as Role;
    const expires = Number(match[2]);
    if (!this.#keys.has(role) || expires <= now) return undefined;
    return sameDigest(Buffer.from(match[3]!), Buffer.from(this.#mac(role, expires))) ? { role, expires } : undefined;
  }

  #mac(role: Role, expires: number): string {
    return createHmac('sha256', this.#keys.get(role)!).update(`${role}.${expires}`).digest('base64url');
  }
}
