// The matrix's Worker: bundled with the package as wrangler would (run-workerd.mjs; the `workerd`
// condition picks the package's build without Node built-ins), it runs the scenario once per
// request and answers with the result. `?setup=` carries the test's setup JSON.
import { Analytics } from 'batched-analytics';
import * as webhooks from 'batched-analytics/webhooks';
import { verifySignatureAsync, verifyStandardWebhook } from 'batched-analytics/webhooks/verify';
import { runScenario } from './scenario.mjs';

export default {
  async fetch(request) {
    const setup = JSON.parse(new URL(request.url).searchParams.get('setup'));
    return Response.json(await runScenario({ Analytics, verify: verifySignatureAsync, verifyStandard: verifyStandardWebhook, webhooks }, setup));
  },
};
