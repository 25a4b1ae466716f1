// The live page's session cookies: signed with a key derived from the token, expiring, per role.
// Pure logic: the clock is passed in.
import { describe, expect, it } from 'vitest';
import { SESSION_COOKIE, SessionCookies } from '../../src/ingress/session.js';

const HOUR = 60 * 60 * 1000;
const tokens = new Map([['admin', 'admin-token-0123456789'], ['reader', 'reader-token-0123456789']] as const);
const value = (setCookie: string) => setCookie.split(';')[0]!;

describe('SessionCookies', () => {
  const cookies = new SessionCookies(tokens, HOUR);

  it('lets the browser in with its role until the lifetime ends, and not a millisecond after', () => {
    const issued = cookies.issue('reader', false, 1_000);
    expect(issued).toMatch(new RegExp(`^${SESSION_COOKIE}=reader\\.\\d+\\.[\\w-]{43}; Path=/; Max-Age=3600; HttpOnly; SameSite=Strict$`));
    expect(cookies.verify(`other=1; ${value(issued)}`, 1_000 + HOUR - 1)).toBe('reader');
    expect(cookies.verify(value(issued), 1_000 + HOUR)).toBeUndefined();
  });

  it('refuses a cookie whose role or expiry was changed, or that another token signed', () => {
    const [, role, expires, mac] = /=(\w+)\.(\d+)\.(.+)$/.exec(value(cookies.issue('reader', false, 0)))!;
    expect(cookies.verify(`${SESSION_COOKIE}=admin.${expires}.${mac}`, 0)).toBeUndefined();
    expect(cookies.verify(`${SESSION_COOKIE}=${role}.${Number(expires) + HOUR}.${mac}`, 0)).toBeUndefined();
    const rotated = new SessionCookies(new Map([['reader', 'new-reader-token-0123456789']]), HOUR);
    expect(rotated.verify(`${SESSION_COOKIE}=${role}.${expires}.${mac}`, 0)).toBeUndefined();
  });

  it('never holds the token, and is Secure when asked', () => {
    const issued = cookies.issue('admin', true, 0);
    expect(issued).not.toContain('admin-token');
    expect(issued).toMatch(/; Secure$/);
  });

  it('gives no session to a role without a token', () => {
    const adminOnly = new SessionCookies(new Map([['admin', 'admin-token-0123456789']]), HOUR);
    const forged = value(cookies.issue('reader', false, 0));
    expect(adminOnly.verify(forged, 0)).toBeUndefined();
    expect(adminOnly.verify(undefined, 0)).toBeUndefined();
  });
});
