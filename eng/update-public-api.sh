#!/usr/bin/env bash
# Rewrites the PublicAPI.Unshipped.txt of src/Manaloc, src/Manaloc.AspNetCore and src/Manaloc.Caching from the code: every public symbol not already in
# PublicAPI.Shipped.txt is listed (RS0016's code fix), and a shipped symbol that is gone is marked
# *REMOVED* (RS0017's). Run it after adding, changing or removing public API, or after a merge
# (conflict markers in the unshipped file are fine: the file is rebuilt from scratch), then review
# `git diff '*PublicAPI.Unshipped.txt'` - that diff is the public API change.
# Takes 20-60 s. Usage: eng/update-public-api.sh [--check]
#   --check: change nothing; exit 1 (and print the diff) if a file is not what the code says.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every packed project's list: src/Manaloc, src/Manaloc.AspNetCore and src/Manaloc.Caching.
projects=(src/Manaloc src/Manaloc.AspNetCore src/Manaloc.Caching)
check=false
[ "${1:-}" = "--check" ] && check=true
status=0

for dir in "${projects[@]}"; do
  project="$dir/$(basename "$dir").csproj"
  unshipped="$dir/PublicAPI.Unshipped.txt"
  backup=$(mktemp)
  cp "$unshipped" "$backup"
  trap 'cp "$backup" "$unshipped"' ERR

  # Start from nothing but the header, so the code fixes list exactly what the code has.
  printf '#nullable enable\n' > "$unshipped"
  dotnet format analyzers "$project" --diagnostics RS0016 RS0017 --severity warn --verbosity quiet
  # One line per symbol, header first, the rest sorted ordinally (the order the analyzer writes).
  { printf '#nullable enable\n'; grep -v '^#nullable enable$' "$unshipped" | grep -v '^$' | LC_ALL=C sort -u; } > "$unshipped.tmp"
  mv "$unshipped.tmp" "$unshipped"
  trap - ERR

  if $check; then
    if ! diff -u "$backup" "$unshipped"; then
      cp "$backup" "$unshipped"
      echo "$unshipped does not match the code: run eng/update-public-api.sh and review the diff" >&2
      status=1
    else
      echo "$unshipped matches the code"
    fi
  else
    changes=$(diff -u "$backup" "$unshipped" | sed -n '3,$p' | grep '^[-+]' || true)
    echo "$dir: ${changes:-no public API change}"
  fi
  rm -f "$backup"
done
exit $status
