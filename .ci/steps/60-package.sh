#!/usr/bin/env bash
# The package as a user gets it. Expected duration: 2-4 minutes on 2 cores.
#  1. Clones HEAD twice into a scratch folder and runs README.md's Install pack lines in each, as written (Release,
#     CI=true, SOURCE_DATE_EPOCH = the commit's time, warnings as errors; the two clones at the same time): every
#     assembly and .nupkg must be byte-identical between the clones. Those packs are the packages every check below
#     reads, and the ones the README's own Install lines of 6 add to a new project: each package is packed once a clone.
#  2. Checks the package: readme, license, XML docs, symbols (.snupkg with the pdb and its SourceLink
#     map), repository commit, and analyzers/ when src/Manaloc.Generators exists. Package validation
#     runs inside pack (EnablePackageValidation).
#  3. Builds and runs samples/PackageConsumer against the .nupkg from a local folder (TreatWarningsAsErrors),
#     with every ```csharp snippet of README.md and src/Manaloc/PACKAGE.md compiled in and run.
#  4. The same for src/Manaloc.AspNetCore: byte-identical, its contents (and its dependency on Manaloc at the same
#     version), and samples/AspNetCoreConsumer built and run against both packages (real Kestrel on 127.0.0.1), with
#     every ```csharp snippet of src/Manaloc.AspNetCore/PACKAGE.md compiled in and run.
#  5. The same for src/Manaloc.Caching: byte-identical, its contents, and its dependencies (Manaloc at the same version and
#     the Microsoft.Extensions caching abstractions, DI, options and options-configuration packages, no shared framework);
#     the web consumer of step 4 also references it, registers AddManalocDistributedCache and compiles and runs every
#     ```csharp snippet of src/Manaloc.Caching/PACKAGE.md.
#  6. README.md's Install steps as written: the pack lines (run in 1, in clone a), the source and add-package lines in a
#     new console project (every package at the version just packed), which must then build; they run beside 3-5, which
#     build their two consumers at the same time.
# Also checks that each package's PublicAPI.Unshipped.txt is what eng/update-public-api.sh would write.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 CI=true

# unzip reads the packages; it is in this machine kind's base image, installed here if a machine lacks it.
command -v unzip >/dev/null || { apt-get update -qq && apt-get install -y -qq unzip >/dev/null; }

work=$(mktemp -d)
# The clones' packs and the consumers' builds run in the background: a failure waits for them before the folder goes.
trap 'wait; rm -rf "$work"' EXIT
fail() { echo "package check failed: $*" >&2; exit 1; }
# A consumer restores the packs from a local folder on top of the machine's own package sources: a nuget.config
# beside the project adds the folder and clears nothing.
local_feed() {
  printf '<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <packageSources>\n    <add key="manaloc-packs" value="%s" />\n  </packageSources>\n</configuration>\n' "$feed_a" > "$1/nuget.config"
}

# The public API check rewrites this tree's PublicAPI.Unshipped.txt files while it runs (and puts them back): it runs
# beside the packs, which build in clones, and is waited for before anything here reads those files.
eng/update-public-api.sh --check > "$work/public-api.log" 2>&1 &
public_api_check=$!

# The sh block of README.md's Install section that packs from a clone: its pack lines run in both clones (1), its other
# lines in a new console project (6), with CLONE replaced by the clone's path.
mapfile -t install < <(awk '/^## Install/ { s = 1; next } s && /^## / { exit } s && /^```sh/ { b = 1; block = ""; next }
  s && b && /^```/ { b = 0; if (block ~ /dotnet pack/) { printf "%s", block; exit } next } s && b && !/^#/ && NF { block = block $0 "\n" }' README.md)
packages=(Manaloc Manaloc.AspNetCore Manaloc.Caching)
readme_packs=(); adds=0; sources=0
for line in "${install[@]}"; do case "$line" in
  "dotnet pack "*) readme_packs+=("$line");;
  "dotnet add package "*) adds=$((adds + 1));;
  "dotnet nuget add source "*) sources=$((sources + 1));;
  *) fail "README's Install block has a line CI does not know how to run: $line";; esac; done
[ "${#readme_packs[@]}" -eq "${#packages[@]}" ] && [ "$adds" -eq "${#packages[@]}" ] && [ "$sources" -eq 1 ] \
  || fail "README's Install block must pack the ${#packages[@]} packages, add the folder as a source once and add each package (found ${#install[@]} lines: ${install[*]:-none})"
# The folder the pack lines write (their -o, relative to the clone), the same for all three.
readme_out=$(sed -nE 's/^.* -o +([^ ]+).*$/\1/p' <<<"${readme_packs[0]}")
[ -n "$readme_out" ] || fail "README's pack line names no output folder (-o): ${readme_packs[0]}"
for line in "${readme_packs[@]}"; do
  [ "$(sed -nE 's/^.* -o +([^ ]+).*$/\1/p' <<<"$line")" = "$readme_out" ] || fail "README's pack lines write to different folders: ${readme_packs[*]}"
done
feed_a="$work/a/${readme_out#./}"
feed_b="$work/b/${readme_out#./}"

echo "== pack twice from two clean clones: README.md's pack lines, as written, in each"
printf '  $ %s\n' "${readme_packs[@]}"
export SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
repo_url=$(sed -n 's|.*<RepositoryUrl>\(.*\)</RepositoryUrl>.*|\1|p' Directory.Build.props | head -1)
# The two clones pack at the same time (separate folders; only NuGet's package cache is shared, and NuGet locks it).
# Each line as the README gives it (its own restore included), with warnings as errors and quiet output added.
pack_clone() {
  local side=$1 line
  git clone --quiet --no-hardlinks "$root" "$work/$side"
  # SourceLink maps sources through the clone's origin, which must be the public repository.
  git -C "$work/$side" remote set-url origin "$repo_url.git"
  for line in "${readme_packs[@]}"; do
    (cd "$work/$side" && eval "$line -warnaserror --verbosity quiet")
  done
}
pack_clone a > "$work/pack-a.log" 2>&1 &
pack_a=$!
pack_clone b > "$work/pack-b.log" 2>&1 &
pack_b=$!
wait "$pack_a" || { cat "$work/pack-a.log"; fail "packing clone a failed"; }
wait "$pack_b" || { cat "$work/pack-b.log"; fail "packing clone b failed"; }
cat "$work/pack-a.log" "$work/pack-b.log"

echo "== public API list matches the code"
public_api_status=0
wait "$public_api_check" || public_api_status=$?
cat "$work/public-api.log"
[ "$public_api_status" -eq 0 ] || fail "a PublicAPI.Unshipped.txt is not what the code says (above)"
nupkg=$(ls "$feed_a"/Manaloc.[0-9]*.nupkg | grep -v '\.snupkg$' | head -1)
[ -f "$nupkg" ] || fail "no .nupkg was written"
name=$(basename "$nupkg")
version=${name#Manaloc.}; version=${version%.nupkg}
cmp "$work/a/src/Manaloc/bin/Release/net10.0/Manaloc.dll" "$work/b/src/Manaloc/bin/Release/net10.0/Manaloc.dll" \
  || fail "Manaloc.dll differs between two builds of the same commit"
cmp "$nupkg" "$feed_b/$name" || fail "$name differs between two packs of the same commit"
echo "Manaloc.dll and $name are byte-identical across two clean builds"

echo "== package contents ($name)"
listing=$(unzip -Z1 "$nupkg")
for entry in PACKAGE.md LICENSE lib/net10.0/Manaloc.dll lib/net10.0/Manaloc.xml; do
  grep -qx "$entry" <<<"$listing" || fail "$entry is missing from $name"
done
nuspec=$(unzip -p "$nupkg" Manaloc.nuspec)
grep -q '<readme>PACKAGE.md</readme>' <<<"$nuspec" || fail "the nuspec names no readme"
grep -q '<license type="expression">MIT</license>' <<<"$nuspec" || fail "the nuspec has no MIT license expression"
grep -q "<repository type=\"git\" url=\"$repo_url\"[^>]*commit=\"$(git rev-parse HEAD)\"" <<<"$nuspec" \
  || fail "the nuspec does not name the repository and this commit"
[ "$(unzip -p "$nupkg" lib/net10.0/Manaloc.xml | grep -c '<member name=')" -gt 100 ] || fail "the XML docs are nearly empty"
# The XML docs document the public API only (src/Manaloc/PublicDocumentation.targets): every type they document,
# and the type of every member they document, is a type of the PublicAPI lists (generic arity aside), and the
# internal throw helper is absent.
unzip -p "$nupkg" lib/net10.0/Manaloc.xml > "$work/Manaloc.xml"
grep -v '^#' src/Manaloc/PublicAPI.Shipped.txt src/Manaloc/PublicAPI.Unshipped.txt -h | grep -v ' -> ' \
  | sed -E 's/^((abstract|static|sealed) )*//; s/<[^<>]*>//g' | sort -u > "$work/api-types.txt"
grep -o '<member name="[A-Z]:[^"]*"' "$work/Manaloc.xml" | sed -E 's/^<member name="//; s/"$//' > "$work/doc-ids.txt"
{ grep '^T:' "$work/doc-ids.txt" | sed -E 's/^T://'
  grep -v '^T:' "$work/doc-ids.txt" | sed -E 's/^[A-Z]://; s/[(~].*$//; s/\.[^.]*$//'; } \
  | sed -E 's/`+[0-9]+//g' | sort -u > "$work/doc-types.txt"
not_public=$(comm -23 "$work/doc-types.txt" "$work/api-types.txt")
[ -z "$not_public" ] || fail "the packed XML docs document types that are not public: $(echo $not_public)"
! grep -q 'name="[A-Z]:Manaloc\.ThrowHelper' "$work/Manaloc.xml" || fail "the packed XML docs document the internal ThrowHelper"
echo "XML docs: $(wc -l < "$work/doc-ids.txt") members, public API only"
if [ -d src/Manaloc.Generators ]; then
  grep -q '^analyzers/dotnet/cs/Manaloc.Generators.dll$' <<<"$listing" || fail "the source generator is not packed under analyzers/dotnet/cs"
  echo "analyzer: analyzers/dotnet/cs/Manaloc.Generators.dll"
  for dir in build buildTransitive; do
    grep -q "^$dir/Manaloc.targets\$" <<<"$listing" || fail "$dir/Manaloc.targets (enables the generator's interceptors) is not packed"
  done
  echo "interceptors: build/ and buildTransitive/Manaloc.targets"
fi
if [ -d src/Manaloc.Analyzers ]; then
  for dll in Manaloc.Analyzers Manaloc.Analyzers.CodeFixes; do
    grep -q "^analyzers/dotnet/cs/$dll.dll\$" <<<"$listing" || fail "$dll.dll (the MNL1xx analyzers) is not packed under analyzers/dotnet/cs"
  done
  echo "analyzers: analyzers/dotnet/cs/Manaloc.Analyzers.dll and Manaloc.Analyzers.CodeFixes.dll"
fi
snupkg="${nupkg%.nupkg}.snupkg"
[ -f "$snupkg" ] || fail "no symbols package (.snupkg)"
# The listing into a variable first: "unzip | grep -q" under pipefail fails when grep exits at its match and unzip,
# still writing, dies of SIGPIPE.
symbols=$(unzip -Z1 "$snupkg")
grep -qx 'lib/net10.0/Manaloc.pdb' <<<"$symbols" || fail "the .snupkg holds no Manaloc.pdb"
unzip -p "$snupkg" lib/net10.0/Manaloc.pdb > "$work/Manaloc.pdb"
grep -aq "raw.githubusercontent.com" "$work/Manaloc.pdb" || fail "the pdb carries no SourceLink map"
echo "readme, license, XML docs, symbols with SourceLink, repository commit: present"

# An adapter package (Manaloc.AspNetCore, Manaloc.Caching): byte-identical across the two clean packs, its readme,
# license, XML docs (without the internal type named by $3), symbols with SourceLink, and a dependency on Manaloc at
# the version just packed. Sets $adapter_nuspec for the package's own checks after it.
check_adapter_package() {
  local id=$1 project=$2 internal_type=$3
  local name="$id.$version.nupkg"
  local nupkg="$feed_a/$name"
  [ -f "$nupkg" ] || fail "no $name was written (every package takes the commit's version)"
  cmp "$work/a/$project/bin/Release/net10.0/$id.dll" "$work/b/$project/bin/Release/net10.0/$id.dll" \
    || fail "$id.dll differs between two builds of the same commit"
  cmp "$nupkg" "$feed_b/$name" || fail "$name differs between two packs of the same commit"
  local listing entry symbols
  listing=$(unzip -Z1 "$nupkg")
  for entry in PACKAGE.md LICENSE "lib/net10.0/$id.dll" "lib/net10.0/$id.xml"; do
    grep -qx "$entry" <<<"$listing" || fail "$entry is missing from $name"
  done
  adapter_nuspec=$(unzip -p "$nupkg" "$id.nuspec")
  grep -q '<readme>PACKAGE.md</readme>' <<<"$adapter_nuspec" || fail "$name's nuspec names no readme"
  grep -q '<license type="expression">MIT</license>' <<<"$adapter_nuspec" || fail "$name's nuspec has no MIT license expression"
  grep -q "<dependency id=\"Manaloc\" version=\"$version\"" <<<"$adapter_nuspec" || fail "$name does not depend on Manaloc $version"
  symbols=$(unzip -Z1 "${nupkg%.nupkg}.snupkg")
  grep -qx "lib/net10.0/$id.pdb" <<<"$symbols" || fail "the .snupkg holds no $id.pdb"
  unzip -p "${nupkg%.nupkg}.snupkg" "lib/net10.0/$id.pdb" > "$work/$id.pdb"
  grep -aq "raw.githubusercontent.com" "$work/$id.pdb" || fail "$id.pdb carries no SourceLink map"
  unzip -p "$nupkg" "lib/net10.0/$id.xml" > "$work/$id.xml"
  ! grep -q "name=\"T:${internal_type//./\\.}" "$work/$id.xml" || fail "the packed XML docs of $id document an internal type"
}

echo "== Manaloc.AspNetCore.$version"
check_adapter_package Manaloc.AspNetCore src/Manaloc.AspNetCore Manaloc.AspNetCore.Dispatching.ClientShares
grep -q '<frameworkReference name="Microsoft.AspNetCore.App"' <<<"$adapter_nuspec" || fail "Manaloc.AspNetCore does not reference the ASP.NET Core shared framework"
[ "$(grep -c '<dependency id=' <<<"$adapter_nuspec")" -eq 1 ] || fail "Manaloc.AspNetCore depends on more than Manaloc: $(grep -o '<dependency id="[^"]*"' <<<"$adapter_nuspec" | tr '\n' ' ')"
echo "byte-identical; readme, license, XML docs, symbols with SourceLink; depends on Manaloc $version and the shared framework only"

echo "== Manaloc.Caching.$version"
check_adapter_package Manaloc.Caching src/Manaloc.Caching Manaloc.Caching.NativeCacheOptionsProblems
! grep -q '<frameworkReference' <<<"$adapter_nuspec" || fail "Manaloc.Caching references a shared framework (a worker service must not need ASP.NET Core)"
cache_deps=$(grep -o '<dependency id="[^"]*"' <<<"$adapter_nuspec" | sed -E 's/<dependency id="//; s/"$//' | LC_ALL=C sort | tr '\n' ' ')
[ "$cache_deps" = "Manaloc Microsoft.Extensions.Caching.Abstractions Microsoft.Extensions.DependencyInjection.Abstractions Microsoft.Extensions.Options Microsoft.Extensions.Options.ConfigurationExtensions " ] \
  || fail "Manaloc.Caching depends on more or other than Manaloc and the abstractions it adapts to: $cache_deps"
echo "byte-identical; readme, license, XML docs, symbols with SourceLink; depends on Manaloc $version and the caching, DI and options abstractions only"

# README.md's Install steps run in the background beside the consumers below (they restore from their own package folder,
# in their own project and home; their packs are clone a's, made by the README's pack lines in 1, whose files the checks
# above have read): output in a log, printed in this place of the step's output once they end.
readme_install() {
  # The Install block's lines but its pack lines (run in 1) in a new console project, with CLONE replaced by clone a's path.
  # `dotnet nuget add source` writes to the user's NuGet.Config, so the project's lines run as a user whose home is a
  # scratch copy of this machine's (its NuGet.Config, with the machine's own sources): the run leaves the real one as it was.
  readme_app="$work/readme-app"
  readme_home="$work/readme-home"
  mkdir -p "$readme_home/.nuget/NuGet"
  [ ! -f "$HOME/.nuget/NuGet/NuGet.Config" ] || cp "$HOME/.nuget/NuGet/NuGet.Config" "$readme_home/.nuget/NuGet/"
  dotnet new console -o "$readme_app" --no-restore > /dev/null
  for line in "${install[@]}"; do
    echo "  \$ $line"
    case "$line" in
      "dotnet pack "*) echo "    (run in clone a at the start of this step: its packages are the ones checked above)" ;;
      # A private package folder, as above: a package of this version cached by an earlier run must not be used.
      *) (cd "$readme_app" && export HOME="$readme_home" NUGET_PACKAGES="$work/packages-readme" && eval "${line//CLONE/$work/a}") > "$work/readme-add.log" 2>&1 \
           || { cat "$work/readme-add.log"; fail "README's Install step failed: $line"; } ;;
    esac
  done
  for id in "${packages[@]}"; do
    grep -q "\"$id/$version\"" "$readme_app/obj/project.assets.json" || fail "after README's Install steps the project does not use $id $version"
  done
  HOME="$readme_home" NUGET_PACKAGES="$work/packages-readme" dotnet build "$readme_app" -c Release --verbosity quiet > "$work/readme-build.log" 2>&1 \
    || { cat "$work/readme-build.log"; fail "the project made by README's Install steps does not build"; }
  echo "README's Install steps: the ${#packages[@]} packages packed, the folder added as a source, each package added to a new project at $version, and it builds"
}
echo "== the README's Install steps, as a user runs them: started in the background, their output follows the consumers'"
readme_install > "$work/readme-install.log" 2>&1 &
readme_install_pid=$!

echo "== consumer projects against the packages ($version) from a local folder"
# Both consumers (this one and the web consumer of step 4) restore and build at the same time, in folders of their own
# (NuGet locks the package folder they share); each is checked and run in turn below.
consumer="$work/consumer"
cp -r samples/PackageConsumer "$consumer"
rm -rf "$consumer/bin" "$consumer/obj"
eng/extract-snippets.sh "$work/snippets" README.md src/Manaloc/PACKAGE.md
web_consumer="$work/web-consumer"
cp -r samples/AspNetCoreConsumer "$web_consumer"
rm -rf "$web_consumer/bin" "$web_consumer/obj"
eng/extract-snippets.sh "$work/web-snippets" src/Manaloc.AspNetCore/PACKAGE.md src/Manaloc.Caching/PACKAGE.md
# Restores then builds a consumer ($1: its project file) with the snippets of $2 compiled in, warnings as errors.
# A private package folder: a package of the same version cached by an earlier run must not be used.
build_consumer() {
  dotnet restore "$1" --packages "$work/packages" -p:ManalocVersion="$version" -p:SnippetsDir="$2" --verbosity quiet \
    && dotnet build "$1" -c Release --no-restore -warnaserror -p:ManalocVersion="$version" -p:SnippetsDir="$2" --verbosity quiet
}
local_feed "$consumer"
local_feed "$web_consumer"
build_consumer "$consumer/PackageConsumer.csproj" "$work/snippets" > "$work/consumer-build.log" 2>&1 &
consumer_build=$!
build_consumer "$web_consumer/AspNetCoreConsumer.csproj" "$work/web-snippets" > "$work/web-consumer-build.log" 2>&1 &
web_consumer_build=$!
wait "$consumer_build" || { cat "$work/consumer-build.log"; fail "the consumer project did not build against the package"; }
cat "$work/consumer-build.log"
grep -q "$work/packages/manaloc/$version/lib/net10.0/Manaloc.dll" "$consumer/obj/project.assets.json" 2>/dev/null \
  || grep -q '"Manaloc/'"$version"'"' "$consumer/obj/project.assets.json" || fail "the consumer did not resolve Manaloc from the package"
timeout 120 dotnet "$consumer/bin/Release/net10.0/PackageConsumer.dll"

echo "== web consumer project against the three packages ($version)"
wait "$web_consumer_build" || { cat "$work/web-consumer-build.log"; fail "the web consumer project did not build against the packages"; }
cat "$work/web-consumer-build.log"
grep -q '"Manaloc.AspNetCore/'"$version"'"' "$web_consumer/obj/project.assets.json" || fail "the web consumer did not resolve Manaloc.AspNetCore from the package"
grep -q '"Manaloc.Caching/'"$version"'"' "$web_consumer/obj/project.assets.json" || fail "the web consumer did not resolve Manaloc.Caching from the package"
timeout 120 dotnet "$web_consumer/bin/Release/net10.0/AspNetCoreConsumer.dll"

if [ -d src/Manaloc.Analyzers ]; then
  echo "== the package's analyzers warn in a consumer's build (SeededMisuse.cs: one misuse per rule)"
  # The clean build above had warnings as errors, so the analyzers found nothing in the program or the snippets.
  misuse_log="$work/seeded-misuse.log"
  set +e
  dotnet build "$consumer/PackageConsumer.csproj" -c Release --no-restore -p:ManalocVersion="$version" -p:SeededMisuse=true \
    -p:TreatWarningsAsErrors=false -o "$work/seeded-out" > "$misuse_log" 2>&1
  status=$?
  set -e
  [ "$status" -eq 0 ] || { cat "$misuse_log"; fail "the consumer build with SeededMisuse.cs failed (exit $status)"; }
  for id in MNL101 MNL102 MNL103 MNL104 MNL105 MNL106 MNL107 MNL108 MNL109; do
    grep -Eq "SeededMisuse\.cs\([0-9]+,[0-9]+\): warning $id" "$misuse_log" || { cat "$misuse_log"; fail "a consumer's build does not report $id at SeededMisuse.cs"; }
  done
  if grep -E "warning MNL1[0-9]{2}" "$misuse_log" | grep -v "SeededMisuse\.cs("; then
    fail "MNL1xx warnings outside SeededMisuse.cs (above)"
  fi
  echo "analyzers: a consumer's build reports MNL101-MNL109 at the seeded misuses and nowhere else"
fi
echo "== the README's Install steps, as a user runs them (output of the background run)"
readme_status=0
wait "$readme_install_pid" || readme_status=$?
cat "$work/readme-install.log"
[ "$readme_status" -eq 0 ] || fail "README's Install steps failed (exit $readme_status; above)"

echo "package: ok"
