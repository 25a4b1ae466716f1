import { networkInterfaces } from 'node:os';

/**
 * The start report's lines saying where the live page is, as URLs a browser can open. Bound to
 * every interface (`--host 0.0.0.0` or `::`), the collector's own URL is no such address: this
 * machine reaches the page at 127.0.0.1, other machines at this one's addresses, which the page
 * answers once they are in `allowedHosts`.
 */
export function liveEventsLines(url: string): string[] {
  const { hostname, port } = new URL(url);
  if (hostname !== '0.0.0.0' && hostname !== '[::]') return [`  live events:  ${url}/`];
  const others = machineAddresses(hostname === '[::]').map((address) => `http://${address}:${port}/`);
  return [
    `  live events:  http://127.0.0.1:${port}/ (listening on every interface)`,
    ...(others.length === 0 ? [] : [`  from others:  ${others.join(', ')} (once the address or name is in allowedHosts)`]),
  ];
}

/** This machine's addresses other machines may reach it at: not loopback, not link-local. */
function machineAddresses(withIpv6: boolean): string[] {
  return Object.values(networkInterfaces())
    .flatMap((addresses) => addresses ?? [])
    .filter(({ internal, family, address }) => !internal && (family === 'IPv4' || (withIpv6 && !address.startsWith('fe80:'))))
    .map(({ family, address }) => (family === 'IPv6' ? `[${address}]` : address));
}
