// `serve --log-format json` of a real process: every line on stderr is one JSON object with level,
// time and msg, with fields, and no message content, write key, token, secret or URL query shows
// in any of them, however the collector came to write it.
import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, postJson, runCli, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { status, useReceivers } from '../../../../test/helpers/receiver.js';

const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

/** Values that must never be logged. */
const SECRETS = {
  property: 'PROPERTY_VALUE_5f1c',
  writeKey: 'wk_WRITEKEY_7d2e',
  adminToken: 'ADMIN_TOKEN_0123456789abcdef',
  sharedSecret: 'SHARED_SECRET_9a8b',
  header: 'HEADER_VALUE_4c3d',
  query: 'QUERY_TOKEN_6e5f',
};

const lines = (stderr: string) => stderr.split('\n').filter((line) => line !== '');

describe('serve --log-format json', () => {
  it('writes a line for each URL disabled, with its source and URL and each key once', async () => {
    const first = await receiver(status(500));
    const second = await receiver(status(500));
    const file = writeConfig(
      temp.dir,
      {
        sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: `${first.url}?token=${SECRETS.query}` }, { url: second.url }] } } }],
        delivery: { minRetryDelay: 20, maxRetryDelay: 50, disableAfter: 300 },
      },
      'disabled.json',
    );
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/disabled`, '--log-format', 'json']);
    const message = { type: 'track', userId: 'u1', event: 'Logged', messageId: 'msg-disabled-1' };
    expect((await postJson(`${collector.url}/v1/track`, message, { authorization: basic('wk_web') })).status).toBe(200);
    await waitFor(() => (collector.stderr().match(/is disabled/g) ?? []).length === 2, 'a disabled line for each URL', 10_000);

    const disabled = lines(collector.stderr()).filter((line) => line.includes('is disabled'));
    for (const line of disabled) {
      const keys = [...line.matchAll(/"(\w+)":/g)].map(([, key]) => key);
      expect(keys).toEqual([...new Set(keys)]);
    }
    expect(disabled.map((line) => JSON.parse(line) as Record<string, unknown>).sort((a, b) => String(a.url).localeCompare(String(b.url)))).toEqual(
      [first.url, second.url].sort().map((url) => expect.objectContaining({ level: 'warn', part: 'urls', source: 'web', url })),
    );
    expect(collector.stderr()).not.toContain(SECRETS.query);
  });

  it('writes one JSON object a line, with fields, and never a message\'s contents or a secret', async () => {
    const hooks = await receiver(status(422));
    const config = (writeKey: string) => ({
      adminToken: SECRETS.adminToken,
      sources: [
        {
          name: 'web',
          writeKey,
          destinations: { Webhooks: { webhooks: [{ url: `${hooks.url}?token=${SECRETS.query}`, headers: { 'X-Key': SECRETS.header } }], sharedSecret: SECRETS.sharedSecret } },
        },
      ],
    });
    const file = writeConfig(temp.dir, config(SECRETS.writeKey), 'json.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/json`, '--log-format', 'json']);
    const message = { type: 'track', userId: 'u1', event: 'Logged', properties: { note: SECRETS.property }, messageId: 'msg-logged-1' };
    expect((await postJson(`${collector.url}/v1/track`, message, { authorization: basic(SECRETS.writeKey) })).status).toBe(200);
    // Every receiver refuses it: a warning about the delivery, with its fields.
    await waitFor(() => collector.stderr().includes('given up'), 'the given-up line');
    // A reload refused for an entry that holds a secret: named, its value not shown.
    writeFileSync(file, JSON.stringify(config(`${SECRETS.writeKey}:colon`)));
    collector.child.kill('SIGHUP');
    await waitFor(() => collector.stderr().includes('reload refused'), 'the refused reload');
    expect(await collector.stop()).toEqual({ code: 0, signal: null });

    const parsed = lines(collector.stderr()).map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const entry of parsed) {
      expect(entry).toMatchObject({ level: expect.stringMatching(/^(info|warn|error)$/), msg: expect.any(String) });
      expect(new Date(entry.time as string).toISOString()).toBe(entry.time);
    }
    expect(parsed[0]).toMatchObject({ level: 'info', msg: 'collector listening', url: collector.url, sources: ['web'], pending: 0 });
    expect(parsed.find((entry) => String(entry.msg).includes('given up'))).toMatchObject({ level: 'warn', part: 'deliveries', source: 'web', messageId: 'msg-logged-1', deliveryId: expect.any(String), url: hooks.url, status: 422 });
    expect(parsed.find((entry) => String(entry.msg).includes('reload refused'))).toMatchObject({ level: 'error', part: 'reload', entry: 'sources[0].writeKey' });
    expect(parsed.at(-1)).toMatchObject({ level: 'info', msg: 'collector stopping; undelivered messages stay in the journal' });
    for (const secret of Object.values(SECRETS)) expect(collector.stderr()).not.toContain(secret);
  });

  it('keeps the human format by default, and refuses a format it does not know', async () => {
    const file = writeConfig(temp.dir, { sources: [{ name: 'web', writeKey: 'wk_web' }] }, 'human.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/human`]);
    await collector.stop();
    expect(lines(collector.stderr())[0]).toBe(`collector listening on ${collector.url}`);
    expect(lines(collector.stderr()).at(-1)).toBe('collector stopping; undelivered messages stay in the journal');

    const wrong = await runCli(['serve', '--config', file, '--log-format', 'xml']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('Expected --log-format to be human or json, got "xml"');
  });
});
