// The twin of open-connection.ts for runtimes without Node's built-ins (the Edge Runtime, Workers):
// the runtime's `fetch`, never undici, which cannot load there.
import { FetchConnection } from './connection-fetch.js';
import type { Connection, ConnectionOptions } from './connection.js';

export function openConnection(options: ConnectionOptions): Connection {
  return new FetchConnection(options.fetch ?? ((url, init) => globalThis.fetch(url, init)), options.dispatcher);
}
