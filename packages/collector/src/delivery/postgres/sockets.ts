import net from 'node:net';

/**
 * The sockets of a store's connections, so that closing it does not wait for ever on a server that
 * does not answer: node-postgres ends a connection by asking the server to close it, which a frozen
 * server or a cut network never does.
 */
export class Sockets {
  readonly #open = new Set<net.Socket>();

  /** A socket for a new connection (node-postgres's `stream` option), known until it closes. */
  readonly open = (): net.Socket => {
    const socket = new net.Socket();
    this.#open.add(socket);
    socket.once('close', () => this.#open.delete(socket));
    return socket;
  };

  /** Waits for `ending` (connections being ended); after `grace` ms, cuts the sockets still open, which ends it. */
  async closeWithin(ending: Promise<unknown[]>, grace: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), grace).unref();
    });
    if (await Promise.race([ending.then(() => false), late])) {
      for (const socket of this.#open) socket.destroy();
      await ending;
    }
    clearTimeout(timer);
  }
}
