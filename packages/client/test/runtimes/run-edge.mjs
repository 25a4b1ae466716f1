// The matrix's runner for the Vercel Edge Runtime (the `edge-runtime` package's VM).
//   node run-edge.mjs '<setup JSON>'  → prints the scenario's result as one JSON line.
import { EdgeRuntime } from 'edge-runtime';
import { bundle } from './bundle.mjs';

const initialCode = await bundle('./edge.mjs', { format: 'iife', globalName: 'edgeScenario', conditions: ['edge-light', 'worker', 'import'] });
const runtime = new EdgeRuntime({ initialCode });
const result = await runtime.evaluate(`edgeScenario.run(${process.argv[2]})`);
console.log(JSON.stringify(result));
