import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { type AddressSet, plainAddress } from '../config/cidr.js';

/**
 * Who sent a request and how, believing what a reverse proxy says only when the proxy is one of
 * `server.trustProxy`: anyone else can write any `X-Forwarded-For` they like.
 */
export class ProxyTrust {
  readonly #trusted: AddressSet;

  constructor(trusted: AddressSet) {
    this.#trusted = trusted;
  }

  /**
   * The sender's address: the socket's; behind trusted proxies, the `X-Forwarded-For` entry
   * nearest the collector that is not itself a trusted proxy (read from the right, as each proxy
   * appends the address it was reached from). An entry that is not an address ends the walk at the
   * last address known good.
   */
  clientAddress(req: IncomingMessage): string {
    let address = plainAddress(req.socket.remoteAddress ?? '');
    if (!this.#trusted.has(address)) return address;
    const forwarded = req.headers['x-forwarded-for'];
    if (forwarded === undefined) return address;
    const hops = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',');
    for (let index = hops.length - 1; index >= 0; index -= 1) {
      const hop = plainAddress(hops[index]!.trim());
      if (isIP(hop) === 0) return address;
      address = hop;
      if (!this.#trusted.has(address)) return address;
    }
    return address;
  }

  /** The scheme the sender used: `https` over TLS, or as a trusted proxy's `X-Forwarded-Proto` says. */
  scheme(req: IncomingMessage): 'http' | 'https' {
    if ((req.socket as TLSSocket).encrypted === true) return 'https';
    if (!this.#trusted.has(req.socket.remoteAddress ?? '')) return 'http';
    const proto = req.headers['x-forwarded-proto'];
    const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
    return first === 'https' ? 'https' : 'http';
  }
}
