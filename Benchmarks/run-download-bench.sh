#!/usr/bin/env bash
# Download benchmark: `forage download` vs `curl -o`, one 1 GiB file from nginx on loopback.
# Usage: Benchmarks/run-download-bench.sh [--size-mib N] [--runs N] [--workdir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx-light >/dev/null; }
command -v curl >/dev/null || { apt-get update -qq && apt-get install -y -qq curl >/dev/null; }
swift build -c release --product forage
python3 Benchmarks/download/download_bench.py "$@"
