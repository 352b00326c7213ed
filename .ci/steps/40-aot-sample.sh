#!/usr/bin/env bash
# NativeAOT sample: publishes samples/AotSample for linux-x64 with NativeAOT, failing on any warning (IL2xxx trim and
# IL3xxx AOT warnings included), then runs the binary and checks its exit code and its last line.
# Expected duration: about 2 minutes on 2 cores (restore of the ILCompiler package on a clean machine adds ~30 s).
set -euo pipefail

sources=()
if [ -d /opt/nuget/packages ]; then
  sources=(--source https://api.nuget.org/v3/index.json --source /opt/nuget/packages)
fi

out=artifacts/aot-sample
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rm -rf "$out"

dotnet restore samples/AotSample -r linux-x64 "${sources[@]}"
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
echo "aot-sample: ok"
