// A short script: record a few calls and end. No flush() or close() is needed for delivery
// (the pending flush timer holds the process until the batch is sent), but close() reports the
// outcome. Exits 1 when a call was not delivered.
//
//   npm run build && WRITE_KEY=wk_example ANALYTICS_ENDPOINT=http://127.0.0.1:8088 node examples/script.mjs
import { Analytics } from 'batched-analytics';
import { settingsFromEnv } from './settings.mjs';

const { writeKey, endpoint } = settingsFromEnv();
const analytics = new Analytics(writeKey, { endpoint });

analytics.on('error', (error) => console.error('delivery failed:', error.message));

analytics.identify({ userId: 'user-42', traits: { name: 'Ada', plan: 'pro' } });
analytics.track({ userId: 'user-42', event: 'Order Completed', properties: { orderId: 'o-1', total: 30 } });
analytics.page({ userId: 'user-42', name: 'Checkout', properties: { path: '/checkout' } });

const summary = await analytics.close({ timeout: 10_000 });
console.log(summary); // { delivered: 3, failed: 0, dropped: 0 }
process.exitCode = summary.failed + summary.dropped > 0 ? 1 : 0;
