#!/usr/bin/env bash
# Fleet benchmark (issue 27): the crawl benchmark's shop crawled into SQLite and into
# PostgreSQL by 1..3 `forage run` workers, a first crawl and a recrawl each, plus one
# worker whose database is 1 ms away (a delaying proxy); PostgreSQL with fsync on.
# Prints one table (pages/s, worker and server CPU per page) and the issue's targets.
# With --statements, also the statements that cost the server most per page (pg_stat_statements).
# Usage: Benchmarks/run-fleet-bench.sh [--products N] [--max-workers N] [--change-every N] [--delay-ms MS] [--statements]
#        [--variants as-is,no-order-lock,no-coverage,forage:PATH,...] [--rounds N] [--no-away] [--worker-cores C] [--per-host-concurrency N] (see fleet_bench.py --help)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup
command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx-light >/dev/null; }
swift build -c release --product forage
swift build -c release --product forage-bench
for arg in "$@"; do
  if [ "$arg" = --statements ]; then export FORAGE_POSTGRES_OPTIONS="-c shared_preload_libraries=pg_stat_statements"; fi
done
FORAGE_POSTGRES_FSYNC=on scripts/with-postgres python3 Benchmarks/fleet/fleet_bench.py "$@"
