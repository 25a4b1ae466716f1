// The matrix's Worker: bundled with the package as wrangler would (run-workerd.mjs), it runs the
// scenario once per request and answers with the result. `?setup=` carries the test's setup JSON.
import { Analytics } from '../../dist/index.js';
import { verifySignatureAsync } from '../../dist/webhooks/verify.js';
import { runScenario } from './scenario.mjs';

export default {
  async fetch(request) {
    const setup = JSON.parse(new URL(request.url).searchParams.get('setup'));
    return Response.json(await runScenario({ Analytics, verify: verifySignatureAsync }, setup));
  },
};
