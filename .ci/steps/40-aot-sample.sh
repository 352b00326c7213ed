#!/usr/bin/env bash
# NativeAOT sample: publishes samples/AotSample for linux-x64 with NativeAOT, failing on any warning (IL2xxx trim and
# IL3xxx AOT warnings included: its New/NewArray/PreGenerate calls with [NativeRecord] interfaces must not warn), then
# runs the binary and checks its exit code and its last line. Then the negative case: the same project built with
# -p:AotSampleUnmarkedCall=true (UnmarkedCall.cs: New with an unmarked interface and with a type parameter) must report
# IL3050 and IL2026 at those calls and nowhere else. A build, not a second publish: the trim/AOT analyzer
# (IsAotCompatible) reports the same warning ids as the NativeAOT compiler, in seconds.
# Expected duration: about 2 minutes on 2 cores (restore of the ILCompiler package on a clean machine adds ~30 s).
set -euo pipefail


out=artifacts/aot-sample
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rm -rf "$out"

dotnet restore samples/AotSample -r linux-x64
set +e
timeout 600 dotnet publish samples/AotSample -c Release -r linux-x64 --no-restore -warnaserror -o "$out" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "aot-sample: publish failed (exit $status)"
  exit 1
fi
# -warnaserror already fails the publish on a warning; this also catches a trim/AOT warning printed as a message.
if grep -E "(warning|error) IL[23][0-9]{3}" "$log"; then
  echo "aot-sample: trim/AOT warnings above"
  exit 1
fi

set +e
output=$(timeout 120 "$out/AotSample" 2>&1)
run_status=$?
set -e
echo "$output"
if [ "$run_status" -ne 0 ]; then
  echo "aot-sample: the binary exited with $run_status"
  exit 1
fi
if ! grep -q "^dynamic code supported: False$" <<<"$output" || [ "$(tail -n 1 <<<"$output")" != "all checks passed" ]; then
  echo "aot-sample: unexpected output (not a NativeAOT run, or a check did not pass)"
  exit 1
fi

# The negative case: calls that need Reflection.Emit warn (warnings not errors here, to read them all).
negative=$(mktemp)
trap 'rm -f "$log" "$negative"' EXIT
set +e
timeout 300 dotnet build samples/AotSample -c Release -r linux-x64 --no-restore -p:AotSampleUnmarkedCall=true -p:TreatWarningsAsErrors=false \
  -o artifacts/aot-sample-unmarked 2>&1 | tee "$negative"
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || { echo "aot-sample: the build with the unmarked calls failed (exit $status)"; exit 1; }
for id in IL3050 IL2026; do
  hits=$(grep -Eo "UnmarkedCall\.cs\([0-9]+,[0-9]+\): warning $id" "$negative" | sort -u | wc -l)
  if [ "$hits" -ne 2 ]; then
    echo "aot-sample: expected $id at the 2 calls of UnmarkedCall.cs (unmarked interface, type parameter), found $hits"
    exit 1
  fi
done
if grep -E "(warning|error) IL[23][0-9]{3}" "$negative" | grep -v "UnmarkedCall\.cs("; then
  echo "aot-sample: trim/AOT warnings outside UnmarkedCall.cs above (the [NativeRecord] calls must stay quiet)"
  exit 1
fi
echo "aot-sample: unmarked calls warn (IL3050, IL2026), marked calls do not"
echo "aot-sample: ok"
