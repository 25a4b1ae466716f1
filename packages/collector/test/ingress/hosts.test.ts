import { describe, expect, it } from 'vitest';
import { HostCheck } from '../../src/ingress/hosts.js';

function check(address: string, allowedHosts: string[] = []): HostCheck {
  const hosts = new HostCheck(allowedHosts);
  hosts.listening(address, 8088);
  return hosts;
}

describe('HostCheck', () => {
  it('allows the loopback names with the port when bound to loopback, and nothing else', () => {
    const hosts = check('127.0.0.1');
    for (const host of ['127.0.0.1:8088', 'localhost:8088', 'LOCALHOST:8088', '[::1]:8088']) expect(hosts.allows(host)).toBe(true);
    for (const host of [undefined, '', 'localhost', '127.0.0.1', 'localhost:8089', 'evil.example:8088', 'localhost.evil.example:8088']) expect(hosts.allows(host)).toBe(false);
  });

  it('allows its own address when bound to another one, but not the loopback names', () => {
    const hosts = check('192.0.2.10');
    expect(hosts.allows('192.0.2.10:8088')).toBe(true);
    expect(hosts.allows('localhost:8088')).toBe(false);
    expect(check('::1').allows('[::1]:8088')).toBe(true);
  });

  it('allows allowedHosts on any port; a leading dot allows the domain and its subdomains', () => {
    const hosts = check('0.0.0.0', ['collector.internal', '.dev.example']);
    for (const host of ['collector.internal', 'Collector.Internal:443', 'dev.example', 'a.b.dev.example:8088', 'localhost:8088']) expect(hosts.allows(host)).toBe(true);
    for (const host of ['0.0.0.0:8088', 'x.collector.internal', 'collector.internal.evil.example', 'baddev.example']) expect(hosts.allows(host)).toBe(false);
  });
});
