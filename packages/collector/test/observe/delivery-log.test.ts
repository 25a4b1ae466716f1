// What the serve command logs of deliveries: the page is not the only place a dropped one shows.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { JournalStore } from '../../src/delivery/journal/store.js';
import { startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { delivery } from '../delivery/store-contract.js';

const temp = tempDir();
afterEach(stopAll);
afterAll(() => temp.remove());

describe('delivery log', () => {
  it('logs a delivery dropped because its source has no Webhooks destination any more at warn, with its ids', async () => {
    const data = `${temp.dir}/data`;
    const journal = new JournalStore(data);
    await journal.open();
    await journal.accept([delivery('left-behind')]);
    await journal.close();
    // The source stays, its Webhooks destination is gone: what waits for it cannot be delivered.
    const config = writeConfig(temp.dir, { sources: [{ name: 'web', writeKey: 'wk_web' }] });
    const collector = await startCollector(['--config', config, '--port', '0', '--data-dir', data, '--log-format', 'json']);
    await waitFor(() => collector.stderr().includes('dropped'), 'the dropped line');
    const line = collector.stderr().split('\n').find((text) => text.includes('dropped'))!;
    expect(JSON.parse(line)).toMatchObject({
      level: 'warn',
      source: 'web',
      deliveryId: 'left-behind',
      messageId: 'm-left-behind',
      msg: 'collector: left-behind dropped: source web has no Webhooks destination any more',
    });
  });
});
