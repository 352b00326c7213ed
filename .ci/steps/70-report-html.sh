#!/usr/bin/env bash
# report.html loads with its charts: runs the lab on one fast experiment into a temporary --out,
# checks the page is one self-contained file whose charts are PNG data URIs that decode to PNGs,
# and, where Chromium is installed, that a headless browser renders it to a screenshot.
# Expected duration: about 15 s (the lab starts, one experiment of ~1 s, one page load).
set -euo pipefail
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
dotnet run --project src/Manaloc.Lab -c Release --no-build -- run first-use --out "$out" > "$out/log.txt" 2>&1 \
  || { cat "$out/log.txt"; echo "70-report-html: the lab run failed"; exit 1; }
page="$out/report.html"
[[ -s "$page" ]] || { echo "70-report-html: no report.html"; exit 1; }
grep -q '<section id="first-use">' "$page" || { echo "70-report-html: no first-use section"; exit 1; }
if grep -Eq '<(img|script|link)[^>]+(src|href)="(https?:|//|[^d"][^a"])' "$page"; then
  echo "70-report-html: the page refers to an outside file"; exit 1
fi
charts=0
while IFS= read -r uri; do
  # Decode to a file first: a pipe into head would end base64 with SIGPIPE, which pipefail counts as failure.
  printf '%s' "${uri#data:image/png;base64,}" | base64 -d > "$out/chart.png" 2>/dev/null || { echo "70-report-html: a chart is not base64"; exit 1; }
  sig="$(od -An -tx1 -N8 "$out/chart.png" | tr -d ' \n')"
  [[ "$sig" == "89504e470d0a1a0a" ]] || { echo "70-report-html: a chart is not a PNG"; exit 1; }
  charts=$((charts + 1))
done < <(grep -o 'data:image/png;base64,[A-Za-z0-9+/=]*' "$page")
[[ $charts -ge 1 ]] || { echo "70-report-html: no chart in the page"; exit 1; }
browser="$(command -v chromium || command -v chromium-browser || true)"
if [[ -n "$browser" ]]; then
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --window-size=412,2000 \
    --screenshot="$out/page.png" "file://$page" > /dev/null 2>&1 || true
  [[ -s "$out/page.png" ]] || { echo "70-report-html: Chromium could not render the page"; exit 1; }
  echo "70-report-html: report.html with $charts chart(s) renders in Chromium"
else
  echo "70-report-html: report.html with $charts PNG chart(s) (Chromium not installed: page not rendered)"
fi
