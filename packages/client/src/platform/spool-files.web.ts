// The twin of spool-files.ts for runtimes without a file system (the Edge Runtime, Workers): the
// client refuses the `spool` option when it is made (see client/spool.ts), so nothing here runs.

export const HAS_FILE_SYSTEM = false;

function missing(): never {
  throw new Error('This runtime has no file system');
}

export const errorCode = (_error: unknown): string | undefined => undefined;
export const makeDir = (_dir: string): void => missing();
export const listFiles = (_dir: string): string[] => missing();
export const readText = (_file: string): string | undefined => missing();
export const createExclusive = (_file: string, _text: string): void => missing();
export const removeFile = (_file: string): void => missing();
export const unlinkFile = (_file: string): void => missing();
export const openAppend = (_file: string): number => missing();
export const appendBytes = (_fd: number, _bytes: Uint8Array): void => missing();
export const appendAll = (_fd: number, _pieces: Uint8Array[]): void => missing();
export const truncateFile = (_file: string, _size: number): void => missing();
export const closeFile = (_fd: number): void => missing();
export const joinPath = (dir: string, name: string): string => `${dir}/${name}`;
export const resolvePath = (dir: string): string => dir;
