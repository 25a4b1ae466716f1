#!/usr/bin/env node
// The `batched-analytics-collector` command. A committed file, not dist/main.js itself: npm links a
// bin only when its file exists at install time, and in a clone `npm ci` runs before the first build.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('batched-analytics-collector: this package is not built yet: run `npm run build` (or `npm start`) in the clone first\n');
  process.exit(1);
}
await import(main.href);
