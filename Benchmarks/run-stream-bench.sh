#!/usr/bin/env bash
# Change stream latency (issue 30): from a commit to its change reaching a
# ChangeStream of the same process, median and p99 over N commits of one new
# record each, on SQLite and (when a server can be started) PostgreSQL.
#
#   Benchmarks/run-stream-bench.sh [--commits N]
#
# Builds forage-bench in release mode (set FORAGE_BENCH to a binary to skip
# the build) and runs `forage-bench stream` on a temporary SQLite file, then
# under scripts/with-postgres on a throwaway PostgreSQL cluster.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COMMITS=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --commits) COMMITS="$2"; shift 2 ;;
    --commits=*) COMMITS="${1#*=}"; shift ;;
    *) echo "usage: $0 [--commits N]" >&2; exit 2 ;;
  esac
done

BENCH="${FORAGE_BENCH:-}"
if [ -z "$BENCH" ]; then
  (cd "$ROOT" && swift build -c release --product forage-bench >&2)
  BENCH="$ROOT/.build/release/forage-bench"
fi

"$BENCH" stream --commits "$COMMITS"
if "$ROOT/scripts/with-postgres" true 2>/dev/null; then
  "$ROOT/scripts/with-postgres" bash -c "\"$BENCH\" stream --commits $COMMITS --store \"\$FORAGE_TEST_POSTGRES_URL\"" \
    | grep -v '^with-postgres'
else
  echo "(no PostgreSQL server could be started: PostgreSQL skipped)"
fi
