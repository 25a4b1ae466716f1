// The matrix's runner for runtimes that load ES modules from disk (Node, Bun, Deno):
//   <runtime> run-module.mjs '<setup JSON>'  → prints the scenario's result as one JSON line.
import { runScenario } from './scenario.mjs';

const dist = new URL('../../dist/', import.meta.url);
const { Analytics } = await import(new URL('index.js', dist).href);
const webhooks = await import(new URL('webhooks.js', dist).href);
const setup = JSON.parse(process.argv[2]);
console.log(JSON.stringify(await runScenario({ Analytics, verify: webhooks.verifySignature, verifyStandard: webhooks.verifyStandardWebhook, webhooks }, setup)));
