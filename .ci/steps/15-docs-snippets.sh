#!/usr/bin/env bash
# Every ```csharp block of docs/*.md compiles, in one build: eng/extract-snippets.sh writes them into
# samples/DocsSnippets/obj/snippets and samples/DocsSnippets builds them against the library, the ASP.NET Core package
# and the lab (project references, up to date after CI's Release build), with the [NativeRecord] generator and the
# MNL1xx analyzers. #line directives put every error and warning at its line in the .md file.
# A block that is wrong on purpose marks each line that must warn with the rule's id in a comment (`// MNL101`,
# docs/analyzers.md): the build must report exactly those (file, line, id) and no other warning.
# Expected duration: under a minute after the Release build (longer on a busy machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
project=samples/DocsSnippets/DocsSnippets.csproj
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

eng/extract-snippets.sh samples/DocsSnippets/obj/snippets docs/*.md
set +e
dotnet build "$project" -c Release -nologo -clp:NoSummary > "$work/build.log" 2>&1
status=$?
set -e
# "…/docs/analyzers.md(75,9): warning MNL101: …" (the path may be mapped to /_/ in CI), each once.
grep -E ": (warning|error) [A-Z]+[0-9]+" "$work/build.log" | sort -u > "$work/diagnostics.txt" || true
if [ "$status" -ne 0 ] || grep -q ": error " "$work/diagnostics.txt"; then
  grep ": error " "$work/diagnostics.txt" || tail -n 30 "$work/build.log"
  echo "docs snippets: the build failed (exit $status): a C# block of docs/ does not compile (errors above, at their .md lines)"
  exit 1
fi
sed -nE 's#^.*/(docs/[^/(]+\.md)\(([0-9]+),[0-9]+\): warning ([A-Z]+[0-9]+):.*$#\1:\2:\3#p' "$work/diagnostics.txt" | sort -u > "$work/reported.txt"
# The marked lines: inside a ```csharp block, a comment naming a rule.
for doc in docs/*.md; do
  awk -v doc="$doc" '/^```csharp[ \t]*$/ { b = 1; next } b && /^```/ { b = 0 } b && match($0, /\/\/ MNL[0-9][0-9][0-9]/) { print doc ":" NR ":" substr($0, RSTART + 3, 6) }' "$doc"
done | sort -u > "$work/expected.txt"
missing=$(comm -23 "$work/expected.txt" "$work/reported.txt")
unexpected=$(grep -vE "^(.*/)?docs/[^/(]+\.md\([0-9]+,[0-9]+\): warning MNL[0-9]+:" "$work/diagnostics.txt" | grep ": warning " || true)
unexpected_mnl=$(comm -13 "$work/expected.txt" "$work/reported.txt")
if [ -n "$missing" ] || [ -n "$unexpected" ] || [ -n "$unexpected_mnl" ]; then
  [ -z "$missing" ] || printf 'marked in the docs but not reported (file:line:rule):\n%s\n' "$missing"
  [ -z "$unexpected_mnl" ] || printf 'reported but not marked (file:line:rule):\n%s\n' "$unexpected_mnl"
  [ -z "$unexpected" ] || printf 'other warnings:\n%s\n' "$unexpected"
  exit 1
fi
echo "docs snippets: $(ls samples/DocsSnippets/obj/snippets/*_*.cs | wc -l) C# blocks of docs/ compiled in one build; $(wc -l < "$work/expected.txt") marked misuses reported with their rule, nothing else warned"
