// A newcomer's first check of the types: `npx tsc --noEmit app.ts` in a project without a
// tsconfig, that is with TypeScript's defaults (an ES5 target, no skipLibCheck), on an app importing
// both packages. The published declarations must compile there too.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');

const APP = `import { Analytics, ConfigError } from 'batched-analytics';
import { WebhookDestination } from 'batched-analytics/webhooks';
import { JournalStore, startCollector } from 'batched-analytics-collector';

const analytics = new Analytics('wk', { endpoint: 'http://127.0.0.1:8088' });
analytics.track({ userId: 'u', event: 'Signed Up' });
const stores: JournalStore[] = [];
export { analytics, ConfigError, stores, startCollector, WebhookDestination };
`;

it('the packages\' declarations compile under `tsc --noEmit app.ts`, with no tsconfig', async () => {
  // Inside the repository, so that the app finds both packages as an installed app would.
  mkdirSync(path.join(root, '.tmp'), { recursive: true });
  const dir = mkdtempSync(path.join(root, '.tmp', 'tsc-app-'));
  try {
    writeFileSync(path.join(dir, 'app.ts'), APP);
    const result = await promisify(execFile)(process.execPath, [tsc, '--noEmit', 'app.ts'], { cwd: dir }).catch((error: { code: number; stdout: string }) => error);
    expect(result.stdout).toBe('');
    expect('code' in result ? result.code : 0).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
