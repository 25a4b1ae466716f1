// The twin of lock-owner.ts for runtimes without processes or a file system (the Edge Runtime,
// Workers): the client refuses the `spool` option there (see client/spool.ts), so nothing here runs.

function missing(): never {
  throw new Error('This runtime has no processes');
}

export const ownerText = (): string => missing();
export const liveOwner = (_text: string): number | undefined => missing();
