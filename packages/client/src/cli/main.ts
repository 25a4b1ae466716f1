#!/usr/bin/env node
import { run } from './dispatch.js';
import { runMain } from './run.js';

await runMain(run);
