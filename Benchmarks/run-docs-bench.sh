#!/usr/bin/env bash
# Docs crawl benchmark: Forage vs Scrapy on the Python 3.11 docs (Debian's
# python3.11-doc) served by nginx on loopback; the records are checked against html5lib.
#
#   Benchmarks/run-docs-bench.sh [--forage PATH] [--forage-runs N] [--scrapy-runs N]
#                                [--allocs] [--skip-scrapy] [--skip-reference] [--keep DIR]
#
# Installs python3.11-doc, nginx (and linux-perf with --allocs) with apt-get when
# missing, makes or updates the virtual environment Benchmarks/.venv (scrapy,
# html5lib, ada-url), builds Forage in release mode unless --forage PATH names a
# binary, and runs Benchmarks/crawl/docs_bench.py with the arguments given.
set -euo pipefail
cd "$(dirname "$0")/.."

forage=""
allocs=0
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --forage) forage="${args[i + 1]:-}" ;;
    --forage=*) forage="${args[i]#--forage=}" ;;
    --allocs) allocs=1 ;;
  esac
done

missing=()
dpkg-query -W -f='${Status}' python3.11-doc 2>/dev/null | grep -q "install ok installed" || missing+=(python3.11-doc)
command -v nginx >/dev/null || missing+=(nginx-light)
command -v python3 >/dev/null || missing+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
[ -x /usr/bin/time ] || missing+=(time)
if [ "$allocs" = 1 ] && ! command -v perf >/dev/null; then missing+=(linux-perf); fi
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ -x Benchmarks/.venv/bin/python ] || python3 -m venv Benchmarks/.venv
Benchmarks/.venv/bin/python -c 'import scrapy, html5lib, ada_url' 2>/dev/null \
  || Benchmarks/.venv/bin/pip install -q scrapy html5lib lxml ada-url

if [ -z "$forage" ]; then
  scripts/setup
  swift build -c release --product forage
fi
# html5lib and ada-url come from the virtual environment (docs_reference.py).
exec Benchmarks/.venv/bin/python Benchmarks/crawl/docs_bench.py "$@"
