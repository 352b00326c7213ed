#!/usr/bin/env bash
# The packed XML docs state contracts, not history or run figures. Reads the documentation files the Release build
# writes for the packages (src/Manaloc/bin/Release/net10.0/Manaloc.xml, src/Manaloc.AspNetCore/bin/Release/net10.0/
# Manaloc.AspNetCore.xml and src/Manaloc.Caching/bin/Release/net10.0/Manaloc.Caching.xml: the files pack puts in the
# .nupkg, already reduced to the public API by
# PublicDocumentation.targets) and fails, naming the member and the words, when a member's doc matches one of:
#   history   "article" / "articles'", "seed" / "the seed's", LOCAL_PRIME / LOCAL_MAX (the article's names),
#             the title of one of the seed articles (README.md, "Where the design comes from"),
#             an issue or pull-request number ("issue 12", "issue #12", "(#12)", "PR 7")
#   runs      "measured", a run named as such ("in one run", "over seven runs", "lab run", "BenchmarkDotNet run",
#             "benchmark runs"), a machine named as the place of a figure ("on 2 vCPUs", "on two cores",
#             "on this machine", "on this VM"), "rough probe"
#   figures   a ratio ("1.35x", "2x"), a throughput ("ops/s"), a fraction of a nanosecond or microsecond
#             ("7.1 ns", "0.4 µs"), a range of nanoseconds ("55-90 ns"), a before → after of numbers ("1.1 GB → 5 MB")
# Contractual times pass: whole times that define behaviour ("about 100 µs", "a tick is 100 ns", "default 30 s",
# "0.9 ms waits at least 0.9 ms", "about 10-20 µs in all before blocking"). Figures belong in docs/, the README's
# table and the lab's reports; history in git and CHANGELOG.md.
# Needs the Release build (.ci/run builds first). Takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/../.."

files=(src/Manaloc/bin/Release/net10.0/Manaloc.xml src/Manaloc.AspNetCore/bin/Release/net10.0/Manaloc.AspNetCore.xml
  src/Manaloc.Caching/bin/Release/net10.0/Manaloc.Caching.xml)

# One alternation per class above (Perl regular expressions, matched case-insensitively).
history='\barticles?\b|\barticles'"'"'|\bseed\b|\bseed'"'"'s\b|\bLOCAL_(PRIME|MAX)\b|\bissue\s*#?\d+|\(#\d+\)|\bPR\s*#?\d+\b'
history+='|Writing a (Manual Memory Manager|Semi-Local Object Pool)|Hot/Cold Data Separation|Lock free code is hard'
history+='|Tradeoffs in High Performance Software|Parallelism and Memory Usage|Heap Performance Counters'
history+="|DateTime\\.Now in v4|Reducing AutoResetEvent|Delayed ACKs|Rely on Environment\\.ProcessorCount"
runs='\bmeasured\b|\b(in|over|across)\s+(one|a|the|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(quiet\s+|lab\s+|benchmark\s+)?runs?\b|\b(lab|benchmark|BenchmarkDotNet)\s+runs?\b|\bon\s+(\d+|two|four)\s+(busy\s+)?(v?CPUs|cores)\b|\bon\s+this\s+(machine|VM)\b|\brough\s+probe\b'
figures='\b\d+(\.\d+)?x\b|\bops/s\b|\b\d+\.\d+\s*(ns|µs|us)\b|\b\d+(\.\d+)?\s*[-–]\s*\d+(\.\d+)?\s*ns\b|\d\s*\S*\s*(→|->)\s*\d'

status=0
checked=0
for file in "${files[@]}"; do
  if [ ! -s "$file" ]; then
    echo "missing $file: build Release first (dotnet build Manaloc.slnx -c Release)" >&2
    exit 1
  fi
  # One line per member: its name, a tab, its documentation with the XML tags and line breaks removed.
  members=$(tr '\n\r' '  ' < "$file" | sed -e 's#</member>#\n#g' \
    | sed -n -E 's#.*<member name="([^"]*)">(.*)#\1\t\2#p' | sed -E 's#<[^>]*>##g; s# +# #g')
  checked=$((checked + $(printf '%s\n' "$members" | grep -c .)))
  for class in history runs figures; do
    pattern=${!class}
    while IFS=$'\t' read -r name text; do
      words=$(printf '%s\n' "$text" | grep -oiP "$pattern" | sort -u | paste -sd ',' -)
      echo "$file: $name: $class ($words)"
      status=1
    done < <(printf '%s\n' "$members" | grep -iP "^[^\t]*\t.*(?:$pattern)" || true)
  done
done

if [ "$status" -ne 0 ]; then
  echo "the packed XML docs must state contracts: move figures from runs to docs/ or the lab, and history to git" >&2
  exit 1
fi
echo "XML docs: $checked members in ${#files[@]} files, no article history or run figures"
