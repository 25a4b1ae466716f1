// The matrix's entry for the Vercel Edge Runtime: the whole scenario, with the package as Vercel
// bundles it (the `edge-light` condition picks its build without Node built-ins). Bundled to a
// script that sets `edgeScenario`.
import { Analytics } from 'batched-analytics';
import * as webhooks from 'batched-analytics/webhooks';
import { verifySignatureAsync, verifyStandardWebhook } from 'batched-analytics/webhooks/verify';
import { runScenario } from './scenario.mjs';

export const run = (setup) => runScenario({ Analytics, verify: verifySignatureAsync, verifyStandard: verifyStandardWebhook, webhooks }, setup);
