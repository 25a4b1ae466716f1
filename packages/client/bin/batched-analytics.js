#!/usr/bin/env node
// The `batched-analytics` command. A committed file, not dist/cli.js itself: npm links a bin only
// when its file exists at install time, and in a clone `npm ci` runs before the first build.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('batched-analytics: this package is not built yet: run `npm run build` (or `npm start`) in the clone first\n');
  process.exit(1);
}
await import(cli.href);
