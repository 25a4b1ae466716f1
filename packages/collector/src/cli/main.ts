#!/usr/bin/env node
import { runCommand, runMain } from 'batched-analytics/internal';
import { collectorCommand } from './serve.js';

const PROGRAM = 'batched-analytics-collector';

// `batched-analytics-collector ...` is `batched-analytics serve ...`: the same flags and output, each
// error line named for the program that was run.
await runMain((argv, context) => runCommand(PROGRAM, collectorCommand(PROGRAM), argv, context));
