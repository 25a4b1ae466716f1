#!/usr/bin/env bash
# The suite under load: runs the whole vitest suite RUNS times (default 5) while a CPU hog
# (`node -e 'for(;;);'`, pinned with taskset to core HOG_CORE, default 1) spins beside it, as CI's
# two cores are when another job shares them; with --idle, without the hog. Builds and type checks
# once first, as `npm test` does. Prints one line per run and a last line with how many passed;
# exits 1 if any run failed. Each run's JSON report is kept in .tmp/stress/.
#
#   test/stress.sh            # 5 runs beside the hog
#   test/stress.sh 3 --idle   # 3 runs without it
#   test/stress.sh 3 -- packages/client/test/client/rate-limit.test.ts   # only these files
set -uo pipefail
cd "$(dirname "$0")/.."

runs=5
hog=yes
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --idle) hog=no ;;
    --) shift; files=("$@"); break ;;
    [0-9]*) runs=$1 ;;
    *) echo "usage: test/stress.sh [RUNS] [--idle] [-- FILES...]" >&2; exit 2 ;;
  esac
  shift
done
core=${HOG_CORE:-1}

npm run build --silent && npx tsc --noEmit || { echo "stress: the build or the type check failed" >&2; exit 1; }

hog_pid=
stop_hog() {
  if [ -n "$hog_pid" ]; then kill "$hog_pid" 2>/dev/null; wait "$hog_pid" 2>/dev/null; hog_pid=; fi
}
# The hog stops however this script ends: a failed run, Ctrl-C, a kill.
trap stop_hog EXIT
trap 'stop_hog; exit 130' INT TERM

if [ "$hog" = yes ]; then
  command -v taskset >/dev/null || { echo "stress: taskset is missing (util-linux)" >&2; exit 1; }
  taskset -c "$core" node -e 'for(;;);' &
  hog_pid=$!
  label="beside a CPU hog on core $core"
else
  label=idle
fi

mkdir -p .tmp/stress
passed=0
for run in $(seq "$runs"); do
  started=$SECONDS
  npx vitest run --config test/vitest.config.ts "${files[@]}" > ".tmp/stress/run-$run.log" 2>&1
  code=$?
  took=$((SECONDS - started))
  cp .tmp/vitest-report.json ".tmp/stress/run-$run.json" 2>/dev/null
  line=$(node -e '
    const r = require(process.argv[1]);
    const failed = r.testResults.flatMap((file) => file.assertionResults.filter((t) => t.status === "failed").map((t) => `${file.name.slice(process.cwd().length + 1)} > ${t.fullName}`));
    console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped${failed.length ? `; failed: ${failed.join("; ")}` : ""}`);' "$PWD/.tmp/stress/run-$run.json" 2>/dev/null || echo "no report (see .tmp/stress/run-$run.log)")
  if [ "$code" -eq 0 ]; then passed=$((passed + 1)); verdict=PASS; else verdict=FAIL; fi
  echo "run $run/$runs ($label): $verdict in ${took} s: $line"
done
stop_hog
echo "stress: $passed of $runs runs passed ($label)"
[ "$passed" -eq "$runs" ]
