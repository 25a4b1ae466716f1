import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';

/**
 * gzip with `node:zlib`, off the main thread. `gzip.web.ts`, its twin for runtimes without
 * `node:zlib`, uses `CompressionStream`.
 */
export const gzip: (bytes: Uint8Array) => Promise<Uint8Array> = promisify(gzipCallback);

/** Whether {@link gzip} works here. */
export const CAN_GZIP = true;
