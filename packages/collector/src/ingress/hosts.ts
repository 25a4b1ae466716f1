import { isIP } from 'node:net';

/** The name in a `Host` header, without its port: `[::1]:8088` → `[::1]`, `example.com:80` → `example.com`. */
export function hostName(host: string): string {
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
}

/** Names that reach a collector bound to a loopback address (or to every address). */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Which `Host` headers the live page and its stream answer. A page that any `Host` reaches is open
 * to DNS rebinding: a site the user visits points its own name at 127.0.0.1 and reads the page as
 * same-origin. Allowed: the collector's own address with its port (bound to loopback or to every
 * address: also `localhost`, `127.0.0.1` and `[::1]` with the port), and the config's
 * `allowedHosts` on any port (a reverse proxy may present another one); an entry starting with a dot
 * allows that domain and its subdomains.
 */
export class HostCheck {
  readonly #names: readonly string[];
  readonly #own = new Set<string>();

  /** @param allowedHosts the config's `allowedHosts`. */
  constructor(allowedHosts: readonly string[]) {
    this.#names = allowedHosts.map((name) => name.toLowerCase());
  }

  /** Learns the address the server listens on; until then only `allowedHosts` pass. */
  listening(address: string, port: number): void {
    const own = isIP(address) === 6 ? `[${address}]` : address;
    const everywhere = address === '0.0.0.0' || address === '::';
    const loopback = everywhere || address === '::1' || address.startsWith('127.');
    for (const name of [...(everywhere ? [] : [own]), ...(loopback ? LOOPBACK_NAMES : [])]) this.#own.add(`${name}:${port}`);
  }

  /** Whether a request with this `Host` header may see the page. */
  allows(host: string | undefined): boolean {
    if (host === undefined || host === '') return false;
    const value = host.toLowerCase();
    if (this.#own.has(value)) return true;
    const name = hostName(value);
    return this.#names.some((allowed) => (allowed.startsWith('.') ? name === allowed.slice(1) || name.endsWith(allowed) : name === allowed));
  }
}
