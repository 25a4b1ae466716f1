import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Reject, RejectsFile } from '../../src/import/rejects.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rejects-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('RejectsFile', () => {
  it('writes one JSON record per line, replacing an older file', async () => {
    const path = join(dir, 'rejects.ndjson');
    await writeFile(path, 'stale\n');
    const file = await RejectsFile.open(path);
    const records: Reject[] = [
      { line: 2, outcome: 'rejected', code: 'ERR_INVALID_JSON', reason: 'Expected a JSON object', text: '{"type":' },
      { line: 9, outcome: 'failed', code: 'ERR_HTTP', reason: 'Request failed with status 400', messageId: 'm-9' },
    ];
    for (const record of records) await file.write(record);
    await file.close();

    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line))).toEqual(records);
  });

  it('keeps every record when writes outpace the disk (backpressure)', async () => {
    const path = join(dir, 'many.ndjson');
    const file = await RejectsFile.open(path);
    const text = 'x'.repeat(1_000);
    for (let line = 1; line <= 2_000; line++) await file.write({ line, outcome: 'rejected', code: 'ERR_VALIDATION', reason: 'bad', text });
    await file.close();
    expect((await readFile(path, 'utf8')).split('\n')).toHaveLength(2_001);
  });

  it('fails to open where the file cannot be created', async () => {
    await expect(RejectsFile.open(join(dir, 'missing', 'rejects.ndjson'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
