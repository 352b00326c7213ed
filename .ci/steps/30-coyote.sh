#!/usr/bin/env bash
# Systematic concurrency tests: rewrites the concurrency test assembly and Manaloc.dll with the
# Coyote tool (a local dotnet tool, .config/dotnet-tools.json), then runs every Coyote test at
# 10,000 schedules (COYOTE_ITERATIONS overrides) and prints the schedules explored per test.
# The mutant tests pass only when Coyote finds the bug planted in their broken variant.
# Two test processes run at once, each with one share of the test classes (their filters are complements, so every
# Coyote test runs exactly once): Coyote's scheduler lets one controlled operation run at a time, so one process keeps
# about one core busy, and one Coyote engine at a time may run in a process (AssemblyInfo.cs).
# Expected duration: about 2 minutes at 10,000 schedules on 2 quiet cores; see docs/concurrency-testing.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
# The tool targets net6.0/net8.0; it runs on the installed runtime.
export DOTNET_ROLL_FORWARD=Major
dotnet tool restore

project=tests/Manaloc.Concurrency.Tests
if [ ! -f "$project/bin/Release/net10.0/Manaloc.Concurrency.Tests.dll" ]; then
  dotnet build "$project" -c Release --no-restore
fi
(cd "$project" && dotnet coyote rewrite rewrite.coyote.json)

out=artifacts/coyote
rm -rf "$out"
mkdir -p "$out"
# The first share: the classes that explore the most steps per schedule, about half the step's time; the second share
# is every other Systematic test (a new class lands there).
first=(SlimReaderWriterLockSchedules NativeMapSchedules NativeCacheSchedules EconomicResetEventSchedules)
first_filter="FullyQualifiedName~Manaloc.Concurrency.Tests.Systematic.${first[0]}."
second_filter="FullyQualifiedName~Systematic&FullyQualifiedName!~Manaloc.Concurrency.Tests.Systematic.${first[0]}."
for class in "${first[@]:1}"; do
  first_filter+="|FullyQualifiedName~Manaloc.Concurrency.Tests.Systematic.$class."
  second_filter+="&FullyQualifiedName!~Manaloc.Concurrency.Tests.Systematic.$class."
done
# Runs share $1 (filter $2); its log is $out/coyote-$1.log, its wall time in seconds $out/coyote-$1.seconds.
run_share() {
  local start=$SECONDS status=0
  timeout 900 dotnet test "$project/bin/Release/net10.0/rewritten/Manaloc.Concurrency.Tests.dll" \
    --filter "$2" --logger "console;verbosity=detailed" \
    --logger "trx;LogFileName=coyote-$1.trx" --results-directory "$out" > "$out/coyote-$1.log" 2>&1 || status=$?
  echo $((SECONDS - start)) > "$out/coyote-$1.seconds"
  return "$status"
}
set +e
run_share 1 "$first_filter" &
first_pid=$!
run_share 2 "$second_filter"
second_status=$?
wait "$first_pid"
first_status=$?
set -e

echo "== schedules explored per test (bugs=1 is expected only for Mutant_* tests)"
grep -h "^coyote-" "$out"/coyote-[12].log | sort -u || true
status=0
for share in 1 2; do
  log="$out/coyote-$share.log"
  share_status=$([ "$share" -eq 1 ] && echo "$first_status" || echo "$second_status")
  echo "-- share $share ($log, $(cat "$out/coyote-$share.seconds") s)"
  grep -E "Total tests|Passed:|Failed:|Skipped:" "$log" | tail -4 || true
  if [ "$share_status" -ne 0 ]; then
    echo "coyote tests failed (exit $share_status$([ "$share_status" -eq 124 ] && echo ": timed out")); full log: $log"
    grep -E "^\s+Failed " "$log" || true
    status=1
  elif ! grep -q "Total tests:" "$log"; then
    echo "share $share ran no Coyote test: its filter matched nothing"
    status=1
  fi
  if grep -q "Skipped " "$log"; then
    echo "a Coyote test was skipped: the rewritten assembly was not recognised"
    status=1
  fi
done
exit "$status"
