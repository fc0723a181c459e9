#!/usr/bin/env bash
# Crawl benchmark: Forage vs Scrapy on a generated shop served by nginx on loopback.
# Usage: Benchmarks/run-crawl-bench.sh [--products N] [--forage-runs K] [--allocs]
# --allocs also counts malloc calls per page (a perf uprobe on libc's malloc, one more
# run of each crawler; installs linux-perf when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup
command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx-light >/dev/null; }
case " $* " in
  *" --allocs "*) command -v perf >/dev/null || { apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null; } ;;
esac
if [ ! -x Benchmarks/.venv/bin/scrapy ]; then
  python3 -m venv Benchmarks/.venv
  Benchmarks/.venv/bin/pip install -q scrapy
fi
swift build -c release --product forage
swift build -c release --product forage-bench
python3 Benchmarks/crawl/crawl_bench.py "$@"
