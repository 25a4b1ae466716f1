import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';

const run = promisify(execFile);
const client = fileURLToPath(new URL('../..', import.meta.url));
const modules = fileURLToPath(new URL('../../../../node_modules', import.meta.url));

describe('batched-analytics serve', () => {
  const temp = tempDir();
  afterAll(async () => {
    await stopAll();
    temp.remove();
  });

  // An app that installed the client alone: its dependencies, and no collector anywhere above it.
  it('exits 2 with one line naming the package to install when batched-analytics-collector is not installed', async () => {
    const app = mkdtempSync(path.join(tmpdir(), 'client-alone-'));
    try {
      const installed = path.join(app, 'node_modules', 'batched-analytics');
      mkdirSync(installed, { recursive: true });
      cpSync(path.join(client, 'dist'), path.join(installed, 'dist'), { recursive: true });
      cpSync(path.join(client, 'package.json'), path.join(installed, 'package.json'));
      for (const dependency of ['undici', 'p-retry', 'is-network-error', 'debug', 'ms']) symlinkSync(path.join(modules, dependency), path.join(app, 'node_modules', dependency));
      writeFileSync(path.join(app, 'collector.json'), '{}');
      const ran = await run(process.execPath, [path.join(installed, 'dist/cli.js'), 'serve', '--config', 'collector.json'], { cwd: app }).catch((error: { code: number; stdout: string; stderr: string }) => error);
      expect(ran).toMatchObject({ code: 2, stdout: '', stderr: 'batched-analytics serve: the collector is in its own package: npm install batched-analytics-collector\n' });
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('runs the collector when batched-analytics-collector is installed, as its own executable does', async () => {
    const file = writeConfig(temp.dir, { sources: [{ name: 'web', writeKey: 'wk_web' }] });
    const viaClient = await startCollector(['--config', file, '--port', '0', '--data-dir', path.join(temp.dir, 'a')]);
    const own = fileURLToPath(new URL('../../../collector/dist/main.js', import.meta.url));
    const viaCollector = await startCollector(['--config', file, '--port', '0', '--data-dir', path.join(temp.dir, 'b')], { executable: own });
    for (const collector of [viaClient, viaCollector]) {
      const res = await fetch(`${collector.url}/v1/track`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from('wk_web:').toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u', event: 'e' }),
      });
      expect(res.status).toBe(200);
    }
    // The same report on stderr, but for its own paths.
    const report = (text: string) => text.replace(/\S*collector-test-\S*/g, 'DIR').replace(/127\.0\.0\.1:\d+/g, 'ADDR');
    expect(report(viaCollector.stderr())).toBe(report(viaClient.stderr()));
  });
});
