// Preloaded (`node --require`) into each collector `npm run bench:collector -- --allocations` starts:
// samples what the process allocates, whether the garbage collector takes it back or not (V8's
// sampling heap profiler otherwise keeps only what is still alive), and writes the profile to the
// file BENCH_HEAP_PROFILE names when the process exits.
'use strict';
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');

const file = process.env.BENCH_HEAP_PROFILE;
if (file) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  // The inspector answers a session of the main thread at once, so this runs within 'exit'.
  process.on('exit', () => {
    session.post('HeapProfiler.getSamplingProfile', (error, result) => {
      if (error === null) writeFileSync(file, JSON.stringify(result.profile));
    });
  });
}
