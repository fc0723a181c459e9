#!/usr/bin/env bash
# Crawl benchmark: Forage vs Scrapy on a generated shop served by nginx on loopback.
# Usage: Benchmarks/run-crawl-bench.sh [--products N]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup
command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx-light >/dev/null; }
if [ ! -x Benchmarks/.venv/bin/scrapy ]; then
  python3 -m venv Benchmarks/.venv
  Benchmarks/.venv/bin/pip install -q scrapy
fi
swift build -c release --product forage
swift build -c release --product forage-bench
python3 Benchmarks/crawl/crawl_bench.py "$@"
