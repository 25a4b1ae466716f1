#!/usr/bin/env node
import { runCommand, runMain } from 'batched-analytics/internal';
import { serveCommand } from './serve.js';

// `batched-analytics-collector ...` is `batched-analytics serve ...`: the same flags, the same output.
await runMain((argv, context) => runCommand('batched-analytics-collector', serveCommand, argv, context));
