import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, truncateSync, unlinkSync, writeFileSync, writeSync, writevSync } from 'node:fs';
import path from 'node:path';

/** Whether this runtime has a file system to keep a spool in. */
export const HAS_FILE_SYSTEM = true;

/** The `code` of a file system error (`ENOSPC`, `EROFS`, `EEXIST` ...); undefined for anything else. */
export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Makes `dir` (and its parents) when missing. */
export function makeDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
}

/** The names of the files in `dir`. */
export function listFiles(dir: string): string[] {
  return readdirSync(dir);
}

/** A file's content as text; undefined when it does not exist. */
export function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** Creates `file` with `text`, failing with `EEXIST` when it exists: a lock. */
export function createExclusive(file: string, text: string): void {
  writeFileSync(file, text, { flag: 'wx' });
}

/** Deletes `file`; one already gone is fine. */
export function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    // Not `rmSync(file, { force: true })`: it looks at the file first, a second system call for each.
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** Deletes `file`, failing with `ENOENT` when another process removed it first (a lock taken over). */
export function unlinkFile(file: string): void {
  unlinkSync(file);
}

/** Opens `file` for appending, creating it. */
export function openAppend(file: string): number {
  return openSync(file, 'a');
}

/** Writes all of `bytes` at the end of the open file: to the OS, which keeps it through the process's death. */
export function appendBytes(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** Writes all of `pieces`, in order, at the end of the open file: one system call for them all, unless it writes only part. */
export function appendAll(fd: number, pieces: Uint8Array[]): void {
  let written = writevSync(fd, pieces);
  for (const piece of pieces) {
    if (written >= piece.length) written -= piece.length;
    else {
      appendBytes(fd, piece.subarray(written));
      written = 0;
    }
  }
}

/** Cuts `file` to its first `size` bytes (which takes no room on a full disk). */
export function truncateFile(file: string, size: number): void {
  truncateSync(file, size);
}

export function closeFile(fd: number): void {
  closeSync(fd);
}

export function joinPath(dir: string, name: string): string {
  return path.join(dir, name);
}

export function resolvePath(dir: string): string {
  return path.resolve(dir);
}
