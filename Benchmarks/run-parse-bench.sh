#!/usr/bin/env bash
# Parse benchmark: ForageHTML against selectolax (Lexbor), lxml and html5lib,
# on the same files, measured the same way, printed side by side.
#
#   Benchmarks/run-parse-bench.sh [DIR] [--repeat K] [--select SELECTOR | --extract] [--parsers LIST]
#
# DIR defaults to ../shared/testdata/html-pages (relative to the repository
# root). Builds forage-bench in release mode (set FORAGE_BENCH to a binary to
# skip the build), runs `forage-bench parse DIR --json`, then
# Benchmarks/peers/parse_peers.py (which makes Benchmarks/.venv on first use),
# and prints one table. "Forage ×" is ForageHTML's MB/s divided by the peer's:
# above 1 means ForageHTML is faster. Both sides include encoding detection
# (bytes in) and, with --select, the selector time in each pass; with
# --extract, each side also does the crawl engine's extraction on every page
# (as on the demo shop's product pages: `forage-bench site DIR`, then
# DIR/product), for selectolax and lxml only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/../shared/testdata/html-pages"
REPEAT=5
SELECT=""
EXTRACT=0
PARSERS="selectolax,lxml,html5lib"

while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) REPEAT="$2"; shift 2 ;;
    --repeat=*) REPEAT="${1#*=}"; shift ;;
    --select) SELECT="$2"; shift 2 ;;
    --select=*) SELECT="${1#*=}"; shift ;;
    --extract) EXTRACT=1; shift ;;
    --parsers) PARSERS="$2"; shift 2 ;;
    --parsers=*) PARSERS="${1#*=}"; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run-parse-bench.sh: unknown option $1" >&2; exit 2 ;;
    *) DIR="$1"; shift ;;
  esac
done

if [ ! -d "$DIR" ]; then
  echo "run-parse-bench.sh: no folder $DIR" >&2
  exit 2
fi

BENCH="${FORAGE_BENCH:-}"
if [ -z "$BENCH" ]; then
  echo "building forage-bench (release)…" >&2
  (cd "$ROOT" && swift build -c release --product forage-bench >&2)
  BENCH="$ROOT/.build/release/forage-bench"
fi

select_args=()
if [ -n "$SELECT" ]; then select_args=(--select "$SELECT"); fi
if [ "$EXTRACT" = 1 ]; then
  select_args+=(--extract)
  if [ "$PARSERS" = "selectolax,lxml,html5lib" ]; then PARSERS="selectolax,lxml"; fi
fi

echo "measuring ForageHTML…" >&2
FORAGE_JSON="$("$BENCH" parse "$DIR" --repeat "$REPEAT" --json "${select_args[@]}")"
PEERS_JSON="$(python3 "$ROOT/Benchmarks/peers/parse_peers.py" "$DIR" --repeat "$REPEAT" --json \
  --parsers "$PARSERS" "${select_args[@]}")"

FORAGE_JSON="$FORAGE_JSON" PEERS_JSON="$PEERS_JSON" DIR="$DIR" REPEAT="$REPEAT" SELECT="$SELECT" EXTRACT="$EXTRACT" python3 - <<'PY'
import json, os

forage = json.loads(os.environ["FORAGE_JSON"])
forage["parser"] = "ForageHTML"
peers = json.loads(os.environ["PEERS_JSON"])
select = os.environ["SELECT"]
rows = [forage] + peers

print(f"{forage['files']} files, {forage['bytes']:,} bytes from {os.environ['DIR']}; "
      f"median of {os.environ['REPEAT']} passes" + (f"; selector {select!r}" if select else "")
      + ("; with the crawl engine's extraction" if os.environ["EXTRACT"] == "1" else "")
      + f"; load average {os.getloadavg()[0]:.2f}")
print()
header = "| parser | median s | MB/s | Forage × |"
rule = "|---|---:|---:|---:|"
if select:
    header += " matches |"
    rule += "---:|"
print(header)
print(rule)
for r in rows:
    ratio = forage["mb_per_s"] / r["mb_per_s"] if r["mb_per_s"] else float("inf")
    line = f"| {r['parser']} | {r['median_seconds']:.4f} | {r['mb_per_s']:.1f} | {ratio:.2f} |"
    if select:
        line += f" {r.get('matches', '-')} |"
    print(line)
PY
