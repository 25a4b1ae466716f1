/** The package version; `test/version.test.ts` keeps it equal to package.json's. */
export const VERSION = '0.1.0';

/** `context.library` of every message. */
export const LIBRARY = Object.freeze({ name: 'batched-analytics', version: VERSION });
