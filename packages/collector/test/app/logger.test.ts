// `startCollector({ logger })`: each collector embedded in a process writes its warnings and errors
// to its own logger, through a child per part when the logger makes them (pino), and to no other.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../src/app/collector.js';
import { parseConfig } from '../../src/config/config.js';
import { tempDir, waitFor } from '../../../../test/helpers/collector.js';
import { delivery } from '../delivery/store-contract.js';
import { recordingLogger } from '../observe/recording-logger.js';

const temp = tempDir();
const running: RunningCollector[] = [];
afterAll(async () => {
  await Promise.all(running.map((collector) => collector.close()));
  temp.remove();
});

/** A data dir whose journal holds an unreadable line, after the lines of `deliveries`' ids. */
function dataDir(name: string, ...ids: string[]): string {
  const dir = path.join(temp.dir, name);
  mkdirSync(dir);
  const line = (record: unknown) => `${JSON.stringify(record)}\n`;
  writeFileSync(
    path.join(dir, 'journal.ndjson'),
    line({ op: 'journal', version: 1 }) + ids.map((id) => line({ op: 'accept', deliveries: [delivery(id)] })).join('') + '{"op":"accept","deliveries":[{"id":"glued"\n',
  );
  return dir;
}

describe('startCollector({ logger })', () => {
  it('gives two collectors in one process each their own logger and rate limit, with a child per part', async () => {
    // The source has no Webhooks destination: what waits for it is dropped.
    const config = parseConfig({ sources: [{ name: 'web', writeKey: 'wk_web' }] });
    const json: Record<string, unknown>[] = [];
    const first = pino({ base: null }, { write: (line: string) => void json.push(JSON.parse(line) as Record<string, unknown>) });
    const second = recordingLogger();
    running.push(await startCollector({ config, dataDir: dataDir('first', 'left-behind'), port: 0, logger: first }));
    running.push(await startCollector({ config, dataDir: dataDir('second'), port: 0, logger: second }));
    await waitFor(() => json.some((line) => String(line.msg).includes('dropped')), 'the dropped line');

    // Pino levels: 40 warn, 50 error.
    expect(json).toEqual([
      expect.objectContaining({ level: 50, part: 'journal', msg: expect.stringMatching(/^collector: skipping an unreadable journal line: .*first.*journal\.ndjson line 3/) }),
      expect.objectContaining({
        level: 40,
        part: 'deliveries',
        source: 'web',
        deliveryId: 'left-behind',
        messageId: 'm-left-behind',
        msg: 'collector: left-behind dropped: source web has no Webhooks destination any more',
      }),
    ]);
    // The same line of the other collector is not held back by the first one's, and the first
    // one's dropped delivery is not in it.
    expect(second.lines).toEqual([
      { level: 'error', part: 'journal', fields: {}, msg: expect.stringMatching(/^collector: skipping an unreadable journal line: .*second.*journal\.ndjson line 2/) },
    ]);
  });
});
