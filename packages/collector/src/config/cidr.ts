import { BlockList, isIP } from 'node:net';

/** An address or a block of them: `10.0.0.1`, `10.0.0.0/8`, `fd00::/8`. */
export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `entry` as a CIDR (a bare address is a block of one); undefined when it is neither. */
export function parseCidr(entry: string): Cidr | undefined {
  const [address = '', prefixText, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const bits = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= bits)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** An IPv4 address as IPv6 sockets report it (`::ffff:10.0.0.1`) is that IPv4 address. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** A set of addresses and CIDRs, asked whether it holds an address. */
export class AddressSet {
  readonly #list = new BlockList();
  readonly empty: boolean;

  /** @param entries addresses and CIDRs, already validated with {@link parseCidr}. */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const { address, prefix, family } = parseCidr(entry)!;
      this.#list.addSubnet(address, prefix, family);
    }
    this.empty = entries.length === 0;
  }

  has(address: string): boolean {
    if (this.empty) return false;
    const plain = plainAddress(address);
    const version = isIP(plain);
    return version !== 0 && this.#list.check(plain, version === 4 ? 'ipv4' : 'ipv6');
  }
}
