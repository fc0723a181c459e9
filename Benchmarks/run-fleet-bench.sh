#!/usr/bin/env bash
# Fleet benchmark: pages/s of 1, 2 and 3 `forage run` workers on one PostgreSQL store,
# beside one worker on SQLite, crawling the same generated shop served by nginx.
# Usage: Benchmarks/run-fleet-bench.sh [--products N] [--max-workers N]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup
command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx-light >/dev/null; }
swift build -c release --product forage
swift build -c release --product forage-bench
scripts/with-postgres python3 Benchmarks/fleet/fleet_bench.py "$@"
