#!/usr/bin/env bash
# Builds the HTML parser fuzzer with libFuzzer and AddressSanitizer, then
# runs it for a bounded time.
#
#   Fuzz/run-fuzz.sh [SECONDS] [extra libFuzzer flags...]
#
# The corpus lives in .build/fuzz/corpus (seeded from the html5lib
# tree-construction inputs when ../shared/testdata is present); crashes are
# written to .build/fuzz/ as crash-<hash>.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
out=.build/fuzz
mkdir -p "$out/corpus"
sources=(Sources/ForageHTML/*.swift)
swiftc -parse-as-library -sanitize=fuzzer,address -O -g \
  -module-name ForageHTML "${sources[@]}" Fuzz/ParserFuzz.swift -o "$out/parser-fuzz"
testdata=../shared/testdata/html5lib-tests/tree-construction
if [ -d "$testdata" ] && [ -z "$(ls -A "$out/corpus")" ]; then
  # One seed file per #data section of the .dat files.
  awk -v dir="$out/corpus" '
    /^#data$/ { if (f) close(f); n++; f = sprintf("%s/seed-%05d.html", dir, n); data = 1; next }
    /^#/ { data = 0; next }
    data { print > f }
  ' "$testdata"/*.dat
fi
exec "$out/parser-fuzz" "$out/corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -artifact_prefix="$out/" "$@"
