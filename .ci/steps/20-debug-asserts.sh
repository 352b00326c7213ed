#!/usr/bin/env bash
# Debug leg: the concurrency tests (Threading, Pooling, Buffers) against a Debug build of the library,
# so its Debug.Assert invariants run. A failed assertion throws DebugAssertException
# (tests/Manaloc.Tests/DebugAssertions.cs) instead of FailFast: a test thread fails its test with the
# message; a background thread's exception stops the test host, which also fails this step.
# Measured on 2 busy cores (load ~25): 2-3 minutes in all (build 1-1.5 min, 250 tests in 55-90 s); bounded at 12 minutes.
set -euo pipefail

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

echo "== Debug build of the library and the tests"
# The Roslyn components (the MNL1xx analyzers, their code fixes, the [NativeRecord] generator) come from CI's Release
# build (Directory.Build.props): they still run on this Debug compile, which only the library's Debug.Assert code needs;
# their own Debug compile would check nothing the Release build has not.
timeout 300 dotnet build tests/Manaloc.Tests/Manaloc.Tests.csproj -c Debug -warnaserror --no-restore -p:RoslynComponentConfiguration=Release

echo "== concurrency tests with Debug.Assert compiled in"
# Allocation tests are left out: unoptimized code allocates where the Release build does not (the
# Release run of the README's test command checks them).
filter="(FullyQualifiedName~Manaloc.Tests.Threading|FullyQualifiedName~Manaloc.Tests.Pooling|FullyQualifiedName~Manaloc.Tests.Buffers|FullyQualifiedName~DebugAssertionsTests)&FullyQualifiedName!~allocat"
timeout 420 dotnet test tests/Manaloc.Tests/Manaloc.Tests.csproj -c Debug --no-build --filter "$filter" --blame-hang-timeout 5m
