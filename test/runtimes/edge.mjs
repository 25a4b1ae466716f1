// The matrix's entry for the Edge Runtime: only the receiver's signature check (the client needs
// `Buffer`, which the Edge Runtime lacks). Bundled to a script that sets `edgeScenario`.
import { verifySignatureAsync } from '../../dist/webhooks/verify.js';
import { runScenario } from './scenario.mjs';

export const run = (setup) => runScenario({ verify: verifySignatureAsync }, setup);
