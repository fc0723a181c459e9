#!/usr/bin/env bash
# Encoding benchmark: the same pages in UTF-8, Shift_JIS and GBK through
# `forage-bench parse`, printed as time per pass and ratio to UTF-8.
#
#   Benchmarks/run-encoding-bench.sh [--rounds R] [--repeat K] [--generated N]
#
# Benchmarks/encoding/make_encoded_pages.py writes three sets of pages into a
# scratch folder (removed at exit): "generated" (N pages of CJK text, about
# 70% of their UTF-8 bytes CJK), "real" (the pages of ../shared/testdata/html-pages
# with real CJK text) and "all" (every page of that folder, mostly English),
# each once per encoding with the same text. Each round runs
# `forage-bench parse FOLDER --repeat K --json` on every folder in turn
# (UTF-8, Shift_JIS, GBK, so the three share the host's moods); the table
# gives the median over the rounds of each folder's median pass, and
# "× UTF-8": the pass time over the UTF-8 pass time of the same pages in the
# same round, median and range over the rounds (below 1.5 is the target of
# issue 15). Builds forage-bench in release mode (set
# FORAGE_BENCH to a binary to skip the build).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS=9
REPEAT=15
GENERATED=60

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --generated) GENERATED="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-encoding-bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

BENCH="${FORAGE_BENCH:-}"
if [ -z "$BENCH" ]; then
  echo "building forage-bench (release)…" >&2
  (cd "$ROOT" && swift build -c release --product forage-bench >&2)
  BENCH="$ROOT/.build/release/forage-bench"
fi

PAGES="$(mktemp -d)"
trap 'rm -rf "$PAGES"' EXIT
python3 "$ROOT/Benchmarks/encoding/make_encoded_pages.py" "$PAGES" --generated "$GENERATED" >&2

RESULTS="$PAGES/results.jsonl"
for round in $(seq "$ROUNDS"); do
  echo "round $round of $ROUNDS…" >&2
  for set in generated real all; do
    for enc in utf-8 shift_jis gbk; do
      line="$("$BENCH" parse "$PAGES/$set/$enc" --repeat "$REPEAT" --json)"
      echo "{\"set\":\"$set\",\"encoding\":\"$enc\",\"result\":$line}" >>"$RESULTS"
    done
  done
done

RESULTS="$RESULTS" ROUNDS="$ROUNDS" REPEAT="$REPEAT" python3 - <<'PY'
import json, os, statistics

rows = [json.loads(l) for l in open(os.environ["RESULTS"])]
rounds = int(os.environ["ROUNDS"])
print(f"{rounds} rounds, each the median of {os.environ['REPEAT']} passes per folder; "
      f"load average {os.getloadavg()[0]:.2f}")
print()
print("| pages | encoding | files | bytes | ms per pass | MB/s | × UTF-8 (median, range) |")
print("|---|---|---:|---:|---:|---:|---:|")
for s in ("generated", "real", "all"):
    def runs(enc):
        return [r["result"] for r in rows if r["set"] == s and r["encoding"] == enc]
    base = [r["median_seconds"] for r in runs("utf-8")]
    for enc in ("utf-8", "shift_jis", "gbk"):
        rs = runs(enc)
        secs = [r["median_seconds"] for r in rs]
        sec = statistics.median(secs)
        # The ratio of each round (same minute of the host), then their median.
        ratios = sorted(x / b for x, b in zip(secs, base))
        ratio = statistics.median(ratios)
        print(f"| {s} | {enc} | {rs[0]['files']} | {rs[0]['bytes']:,} | {sec * 1000:.2f} | "
              f"{rs[0]['bytes'] / 1e6 / sec:.1f} | {ratio:.2f} ({ratios[0]:.2f}–{ratios[-1]:.2f}) |")
PY
