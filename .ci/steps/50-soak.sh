#!/usr/bin/env bash
# Soak: every component together under random load for 60 s (lab soak --seconds 60), invariants
# checked continuously; fails on any violation. Summary: artifacts/soak/soak-summary.md.
# Expected duration: about 70 s (60 s of load, start-up and the final drain and checks).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f src/Manaloc.Lab/bin/Release/net10.0/Manaloc.Lab.dll ]; then
  dotnet build src/Manaloc.Lab -c Release --no-restore
fi
timeout 300 dotnet run --project src/Manaloc.Lab -c Release --no-build -- soak --seconds "${SOAK_SECONDS:-60}" --out artifacts/soak
